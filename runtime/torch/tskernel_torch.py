"""The runtime of the PyTorch modules that `tskernel build --target torch` writes (docs/torch.md).

A generated module describes each kernel of its file as data (its parameters as tensors, sizes and scalar
arguments; its specializations with block, shared memory, grid and requirements as Python functions of the
sizes) and registers it as a torch.library.custom_op whose implementation is `Kernel.launch` and whose fake
implementation is `Kernel.fake` (a kernel built for several element types is a `Dispatch` over one `Kernel`
per combination of types, which picks one by the tensors' dtypes). This file checks the arguments (dtype,
device, contiguity and the declared shapes, with errors that name the parameter), binds the sizes, picks the
first specialization whose requirements hold, allocates the outputs and launches the kernel through the CUDA
driver API (ctypes: no C++ compiler) on the tensors' device and PyTorch's current stream, from the cubin
built for that GPU's architecture or else from the PTX, which the driver compiles. After a kernel's first launch a launcher written
for its parameters takes over (fast_launcher), and `route` decides whether a call goes through PyTorch's
dispatcher at all. PyTorch is imported only where a tensor is handled, so the parts that need no GPU run (and
are tested, runtime/torch/test_tskernel_torch.py) anywhere.
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading

# ---- the element types ------------------------------------------------------------------------------------
#
# One row per tskernel type: the torch dtype's name, how a scalar argument of the type is passed to the kernel
# (a ctypes type and the conversion of a Python number to its value), the Python types a scalar argument may
# be, and its range. A new type of the language is one new row.


def _float_bits(fmt, bits_fmt):
    return lambda v: struct.unpack(bits_fmt, struct.pack(fmt, float(v)))[0]


def _bf16_bits(v):
    """The bfloat16 nearest to v (ties to even), as the 16 bits a kernel parameter holds."""
    bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:
        return (bits >> 16) | 0x40  # a quiet NaN
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


class ElementType:
    __slots__ = ("name", "torch_name", "ctype", "convert", "kind", "low", "high")

    def __init__(self, name, torch_name, ctype, kind, convert=None, low=None, high=None):
        self.name = name
        self.torch_name = torch_name
        self.ctype = ctype
        self.kind = kind  # "float", "int" or "bool": what a scalar argument must be
        self.convert = convert or (lambda v: v)
        self.low = low
        self.high = high


TYPES = {
    t.name: t
    for t in (
        ElementType("f32", "float32", ctypes.c_float, "float"),
        ElementType("i32", "int32", ctypes.c_int32, "int", low=-(2**31), high=2**31 - 1),
        ElementType("u32", "uint32", ctypes.c_uint32, "int", low=0, high=2**32 - 1),
        ElementType("bool", "bool", ctypes.c_bool, "bool"),
        ElementType("f16", "float16", ctypes.c_uint16, "float", convert=_float_bits("<e", "<H")),
        ElementType("bf16", "bfloat16", ctypes.c_uint16, "float", convert=_bf16_bits),
        ElementType("f64", "float64", ctypes.c_double, "float"),
        ElementType("i8", "int8", ctypes.c_int8, "int", low=-(2**7), high=2**7 - 1),
        ElementType("u8", "uint8", ctypes.c_uint8, "int", low=0, high=2**8 - 1),
        ElementType("i16", "int16", ctypes.c_int16, "int", low=-(2**15), high=2**15 - 1),
        ElementType("u16", "uint16", ctypes.c_uint16, "int", low=0, high=2**16 - 1),
    )
}


class TskernelError(ValueError):
    """A call that cannot launch: a wrong argument, or no specialization for its sizes."""


# ---- formulas (the grid and requirements the generated module prints) -------------------------------------


def div(a, b):
    """Integer division truncated toward zero, as C and the kernel language do."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def mod(a, b):
    """The remainder of `div`: its sign is the dividend's, as in C."""
    return a - b * div(a, b)


def cdiv(a, b):
    """a / b rounded up (for the counts of blocks: sizes are not negative)."""
    return -(-a // b)


# ---- parameters ---------------------------------------------------------------------------------------------


class Tensor:
    """A buffer parameter: its element type, shape (dims: whole numbers, size names, "...name") and role:
    "input", "output" (allocated and returned), "zeroed output" (allocated as zeros: atomics add into it) or
    "mutated" (an input the kernel writes in place)."""

    __slots__ = ("name", "type", "dims", "role", "rest_at")

    def __init__(self, name, type, dims, role="input"):
        if role not in ("input", "output", "zeroed output", "mutated"):
            raise ValueError(f"unknown role {role!r}")
        self.name = name
        self.type = TYPES[type]
        self.dims = tuple(dims)
        self.role = role
        rests = [i for i, d in enumerate(self.dims) if isinstance(d, str) and d.startswith("...")]
        self.rest_at = rests[0] if rests else None

    @property
    def is_output(self):
        return self.role in ("output", "zeroed output")

    def describe(self):
        return "[" + ", ".join(str(d) for d in self.dims) + "]"


class Size:
    """A scalar parameter that receives a size the tensors' shapes give (not an argument of the operator)."""

    __slots__ = ("name", "type")

    def __init__(self, name, type):
        self.name = name
        self.type = TYPES[type]


class Scalar:
    """A scalar argument of the operator."""

    __slots__ = ("name", "type")

    def __init__(self, name, type):
        self.name = name
        self.type = TYPES[type]


class Specialization:
    """One compiled entry point: its function in the cubin/PTX, block, dynamic shared memory, and its grid and
    requirements as functions of the sizes (a dict), with each requirement's text for the error message."""

    __slots__ = ("function", "constants", "block", "shared_bytes", "grid", "requires", "functions", "dim_constants")

    def __init__(self, function, constants, block, shared_bytes, grid, requires=()):
        self.function = function
        self.constants = dict(constants)
        self.block = tuple(block)
        self.shared_bytes = shared_bytes
        self.grid = grid
        self.requires = tuple(requires)
        self.functions = {}  # device index -> (context, CUfunction, argument pack)
        # The constants that shapes name ("[BINS]"): an input's size must be the constant's value here.
        self.dim_constants = ()

    def unmet(self, sizes):
        """What this specialization needs that the sizes do not meet, as texts (empty: it takes them)."""
        wrong = [f"{k} == {v}" for k, v in self.dim_constants if k in sizes and sizes[k] != v]
        return wrong + [text for text, check in self.requires if not check(sizes)]

    def accepts(self, sizes):
        # (Loops rather than all() over generators: this runs on every call.)
        for k, v in self.dim_constants:
            if k in sizes and sizes[k] != v:
                return False
        for _, check in self.requires:
            if not check(sizes):
                return False
        return True


# ---- binding sizes (no PyTorch needed: it reads shapes) -----------------------------------------------------


def _product(values):
    result = 1
    for v in values:
        result *= v
    return result


def bind_shape(op, tensor, shape, sizes, rests, sources):
    """Binds the sizes named in `tensor`'s declared dims from an input's actual shape, or checks them against
    sizes bound before (by `sources[name]`, the parameter that bound them). `rests[name]` keeps the dims a
    `...name` covered, for outputs of the same shape."""
    dims = tensor.dims
    fixed = len(dims) - (1 if tensor.rest_at is not None else 0)
    if (tensor.rest_at is None and len(shape) != fixed) or len(shape) < fixed:
        many = f"{fixed} or more dimensions" if tensor.rest_at is not None else f"{fixed} dimension{'s' if fixed != 1 else ''}"
        raise TskernelError(f"{op}: parameter '{tensor.name}' must have {many} ({tensor.describe()}), got shape {tuple(shape)}")
    extra = len(shape) - fixed
    position = 0
    for index, dim in enumerate(dims):
        if index == tensor.rest_at:
            covered = tuple(shape[position : position + extra])
            position += extra
            name = dim[3:]
            value = _product(covered)
            if name in rests and tuple(rests[name]) != covered:
                raise TskernelError(
                    f"{op}: parameter '{tensor.name}' has leading dimensions {covered} for ...{name}, but '{sources[name]}' has {tuple(rests[name])}"
                )
            rests.setdefault(name, covered)
        else:
            value = shape[position]
            position += 1
            if isinstance(dim, int):
                if value != dim:
                    raise TskernelError(f"{op}: parameter '{tensor.name}' must have {dim} on dimension {index} ({tensor.describe()}), got shape {tuple(shape)}")
                continue
            name = dim
        if name in sizes:
            if sizes[name] != value:
                raise TskernelError(
                    f"{op}: parameter '{tensor.name}' gives size {name} = {value} ({tensor.describe()}, shape {tuple(shape)}), but '{sources[name]}' gave {name} = {sizes[name]}"
                )
        else:
            sizes[name] = value
            sources[name] = tensor.name


def output_shape(tensor, sizes, rests, constants):
    """The shape of an output from the bound sizes (and the specialization's constants, for "[BINS]"); a
    `...name` takes the dims of the input that bound it."""
    shape = []
    for index, dim in enumerate(tensor.dims):
        if index == tensor.rest_at:
            name = dim[3:]
            shape.extend(rests[name] if name in rests else (sizes[name],))
        elif isinstance(dim, int):
            shape.append(dim)
        else:
            shape.append(sizes[dim] if dim in sizes else constants[dim])
    return tuple(shape)


def check_scalar(op, param, value):
    """A scalar argument as the kernel takes it, or a TskernelError naming the parameter."""
    kind = param.type.kind
    if kind == "bool":
        if not isinstance(value, bool):
            raise TskernelError(f"{op}: parameter '{param.name}' expects a bool, got {type(value).__name__} {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind == "int" and not isinstance(value, int)):
        expected = "an integer" if kind == "int" else "a number"
        raise TskernelError(f"{op}: parameter '{param.name}' expects {expected} ({param.type.name}), got {type(value).__name__} {value!r}")
    if kind == "int" and not param.type.low <= value <= param.type.high:
        raise TskernelError(f"{op}: parameter '{param.name}' expects a {param.type.name} (from {param.type.low} to {param.type.high}), got {value}")
    return value


def choose(op, specializations, sizes):
    """The first specialization whose requirements hold for these sizes, or an error listing what each needs."""
    for spec in specializations:
        if spec.accepts(sizes):
            return spec
    shown = ", ".join(f"{k} = {v}" for k, v in sizes.items())
    needs = "; ".join(f"{s.function}: " + ", ".join(s.unmet(sizes)) for s in specializations)
    raise TskernelError(f"{op}: no specialization takes {shown} (not met: {needs})")


GRID_LIMITS = (2**31 - 1, 65535, 65535)


def check_grid(op, grid):
    """The grid as three ints; None when a dimension is 0 (an empty launch, which is skipped)."""
    grid = tuple(int(g) for g in grid)
    if any(g < 0 for g in grid):
        raise TskernelError(f"{op}: the declared grid is negative for these sizes: {grid}")
    if 0 in grid:
        return None
    for axis, (g, limit) in enumerate(zip(grid, GRID_LIMITS)):
        if g > limit:
            raise TskernelError(f"{op}: grid {'xyz'[axis]} = {g} exceeds CUDA's limit of {limit}")
    return grid


# ---- module images: the cubin for the GPU, else PTX ---------------------------------------------------------


def _arch_number(arch):
    digits = "".join(ch for ch in arch.split("_", 1)[-1] if ch.isdigit())
    return int(digits) if digits else 0


class Images:
    """The cubins and PTX of one kernel file, by architecture ("sm_90"), in the module's directory."""

    def __init__(self, directory, cubins=None, ptx=None):
        self.directory = directory
        self.cubins = dict(cubins or {})
        self.ptx = dict(ptx or {})

    def choose(self, arch):
        """(path, "cubin" or "ptx") for a GPU of this architecture: its cubin; else the PTX of the newest
        architecture not newer than it (the driver compiles PTX for newer GPUs, never older ones)."""
        if arch in self.cubins:
            return os.path.join(self.directory, self.cubins[arch]), "cubin"
        usable = [a for a in self.ptx if _arch_number(a) <= _arch_number(arch)]
        if usable:
            best = max(usable, key=_arch_number)
            return os.path.join(self.directory, self.ptx[best]), "ptx"
        built = [f"cubin for {a}" for a in self.cubins] + [f"PTX for {a}" for a in self.ptx]
        raise TskernelError(
            f"no code for this {arch} GPU: the build has {', '.join(built) or 'nothing'}; "
            f"rebuild with --cubin --arch {arch}, or --ptx with an --arch no newer than {arch}"
        )


# ---- the CUDA driver ----------------------------------------------------------------------------------------

CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class CudaError(RuntimeError):
    pass


class Driver:
    """The driver calls a launch needs, in PyTorch's primary context of each device."""

    def __init__(self, lib=None):
        c = ctypes
        self.lib = lib or c.CDLL("libcuda.so.1")
        signatures = {
            "cuInit": [c.c_uint],
            "cuDeviceGet": [c.POINTER(c.c_int), c.c_int],
            "cuDeviceGetAttribute": [c.POINTER(c.c_int), c.c_int, c.c_int],
            "cuDevicePrimaryCtxRetain": [c.POINTER(c.c_void_p), c.c_int],
            "cuCtxGetCurrent": [c.POINTER(c.c_void_p)],
            "cuCtxPushCurrent_v2": [c.c_void_p],
            "cuCtxPopCurrent_v2": [c.POINTER(c.c_void_p)],
            "cuModuleLoadData": [c.POINTER(c.c_void_p), c.c_void_p],
            "cuModuleGetFunction": [c.POINTER(c.c_void_p), c.c_void_p, c.c_char_p],
            "cuFuncSetAttribute": [c.c_void_p, c.c_int, c.c_int],
            "cuLaunchKernel": [c.c_void_p] + [c.c_uint] * 7 + [c.c_void_p, c.c_void_p, c.c_void_p],
            "cuGetErrorName": [c.c_int, c.POINTER(c.c_char_p)],
        }
        for name, argtypes in signatures.items():
            fn = getattr(self.lib, name)
            fn.argtypes = argtypes
            fn.restype = c.c_int
        self.launch_kernel = self.lib.cuLaunchKernel
        # The same entry point without argtypes, for the fast launcher, which passes the function and stream as
        # c_void_p objects and the dimensions as ints: a third of the conversion's cost (2.3 of 3.4 µs on a
        # 2-core development host, measured with a stub library).
        raw = getattr(ctypes.CDLL(self.lib._name), "cuLaunchKernel")
        raw.restype = c.c_int
        self.launch_kernel_raw = raw
        self.get_current = self.lib.cuCtxGetCurrent
        self.check("cuInit", self.lib.cuInit(0))
        self.devices = {}
        self.lock = threading.Lock()

    def check(self, call, code):
        if code != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(code, ctypes.byref(name))
            raise CudaError(f"{call} failed with {name.value.decode() if name.value else 'error'} ({code})")

    def device(self, index):
        """(primary context, architecture) of device `index`, as PyTorch numbers it."""
        state = self.devices.get(index)
        if state is None:
            with self.lock:
                device = ctypes.c_int()
                self.check("cuDeviceGet", self.lib.cuDeviceGet(ctypes.byref(device), index))
                major, minor = ctypes.c_int(), ctypes.c_int()
                self.check("cuDeviceGetAttribute", self.lib.cuDeviceGetAttribute(ctypes.byref(major), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
                self.check("cuDeviceGetAttribute", self.lib.cuDeviceGetAttribute(ctypes.byref(minor), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
                context = ctypes.c_void_p()
                self.check("cuDevicePrimaryCtxRetain", self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device))
                state = (context.value, f"sm_{major.value}{minor.value}", {})
                self.devices[index] = state
        return state

    def in_context(self, context, work):
        """Runs `work()` with `context` current: PyTorch's context of the tensors' device is usually current
        already; otherwise it is pushed for the call and popped after, leaving PyTorch's current device alone."""
        current = ctypes.c_void_p()
        self.get_current(ctypes.byref(current))
        if current.value == context:
            return work()
        self.check("cuCtxPushCurrent", self.lib.cuCtxPushCurrent_v2(context))
        try:
            return work()
        finally:
            popped = ctypes.c_void_p()
            self.lib.cuCtxPopCurrent_v2(ctypes.byref(popped))

    def load(self, index, images):
        """The module of `images` on device `index`, loaded once per device."""
        context, arch, modules = self.device(index)
        module = modules.get(id(images))
        if module is None:
            path, kind = images.choose(arch)
            with open(path, "rb") as f:
                image = f.read()
            if kind == "ptx":
                image += b"\0"  # the driver reads PTX as a C string
            handle = ctypes.c_void_p()

            def load():
                code = self.lib.cuModuleLoadData(ctypes.byref(handle), ctypes.c_char_p(image))
                self.check(f"cuModuleLoadData({os.path.basename(path)}, {kind} on {arch})", code)

            self.in_context(context, load)
            module = handle.value
            modules[id(images)] = module
        return context, module

    def multiprocessors(self, index):
        """The multiprocessors of device `index` (a persistent kernel's grid: at most one block each)."""
        count = ctypes.c_int()
        device = ctypes.c_int()
        self.check("cuDeviceGet", self.lib.cuDeviceGet(ctypes.byref(device), index))
        self.check("cuDeviceGetAttribute", self.lib.cuDeviceGetAttribute(ctypes.byref(count), CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device))
        return count.value

    def encode_tensor_map(self, address, rows, cols, box_rows, box_cols, type_name):
        """The 128 bytes of the tensor memory accelerator's descriptor of a row-major rows × cols tensor at
        `address`, in boxes of box_rows × box_cols, as runtime/tensor-map.ts's createTensorMap makes it
        (cuTensorMapEncodeTiled: no interleave, 128-byte swizzle, 256-byte L2 promotion, zeros outside)."""
        code, size = TENSOR_MAP_TYPES[type_name]
        encode = getattr(self, "_encode", None)
        if encode is None:
            encode = getattr(self.lib, "cuTensorMapEncodeTiled", None)
            if encode is None:
                raise CudaError("this CUDA driver has no cuTensorMapEncodeTiled (tensor maps need CUDA 12 or later)")
            c = ctypes
            encode.argtypes = [c.c_void_p, c.c_int, c.c_uint, c.c_void_p, c.c_void_p, c.c_void_p, c.c_void_p, c.c_void_p, c.c_int, c.c_int, c.c_int, c.c_int]
            encode.restype = c.c_int
            self._encode = encode
        # The descriptor must be 64-byte aligned: a buffer with room to align it.
        buffer = ctypes.create_string_buffer(128 + 64)
        at = (ctypes.addressof(buffer) + 63) & ~63
        dims = (ctypes.c_uint64 * 2)(cols, rows)
        strides = (ctypes.c_uint64 * 1)(cols * size)
        box = (ctypes.c_uint32 * 2)(box_cols, box_rows)
        steps = (ctypes.c_uint32 * 2)(1, 1)
        code = encode(at, code, 2, address, dims, strides, box, steps, 0, 3, 3, 0)
        self.check("cuTensorMapEncodeTiled", code)
        return ctypes.string_at(at, 128)

    def function(self, module, name, shared_bytes):
        function = ctypes.c_void_p()
        self.check(f"cuModuleGetFunction({name})", self.lib.cuModuleGetFunction(ctypes.byref(function), module, name.encode()))
        if shared_bytes > 0:
            self.check("cuFuncSetAttribute", self.lib.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes))
        return function.value


_driver = None


def driver():
    global _driver
    if _driver is None:
        _driver = Driver()
    return _driver


class ArgumentPack:
    """cuLaunchKernel's kernelParams for one entry point: one ctypes value per parameter, made once, and the
    array of their addresses. A launch sets the values and passes the array (the driver copies the values
    during the call), under a lock, since the autograd engine runs backward launches on threads of its own (a
    reentrant one: the fast launcher may hand a call back to the generic path while it holds it)."""

    __slots__ = ("values", "array", "lock", "current", "current_pointer", "function")

    def __init__(self, ctypes_types, function=None):
        self.values = [t() for t in ctypes_types]
        self.function = ctypes.c_void_p(function)  # the CUfunction, as the fast launcher passes it
        self.array = (ctypes.c_void_p * max(1, len(self.values)))(*[ctypes.addressof(v) for v in self.values])
        self.lock = threading.RLock()
        self.current = ctypes.c_void_p()  # the context current at launch time
        self.current_pointer = ctypes.pointer(self.current)


def launch_packed(cuda, context, function, name, grid, block, shared_bytes, stream, pack):
    """cuLaunchKernel of `function` with the values set in `pack` (under its lock), in `context`: PyTorch's
    context of the device is usually current; otherwise it is pushed for the launch and popped after."""
    cuda.get_current(pack.current_pointer)
    pushed = pack.current.value != context
    if pushed:
        cuda.check("cuCtxPushCurrent", cuda.lib.cuCtxPushCurrent_v2(context))
    try:
        code = cuda.launch_kernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes, stream, pack.array, None)
    finally:
        if pushed:
            cuda.lib.cuCtxPopCurrent_v2(ctypes.byref(pack.current))
    if code != 0:
        cuda.check(f"cuLaunchKernel({name})", code)


# ---- tensor maps ---------------------------------------------------------------------------------------------
#
# The kernels that copy with the tensor memory accelerator (copyTile: the wgmma GEMM and FlashAttention) take
# each tensor map as a ReadonlyUint32Array parameter: the address of its 128-byte descriptor in device memory,
# as runtime/tensor-map.ts's createTensorMap makes it. Here the descriptors of one launch (or of the launches of
# one call) are encoded on the host (cuTensorMapEncodeTiled), copied into one device buffer from pinned memory
# on the launch's stream (so the copy is ordered before the kernels that read it, and PyTorch's caching host
# allocator keeps the pinned block until the copy is done), and kept in a bounded cache keyed by everything the
# bytes depend on: the device, the stream, and each map's (tensor address, rows, cols, box, type). The
# descriptor is a function of that key alone, so a hit is correct whether or not the tensors it was made for
# are still alive (a new tensor at the same address with the same shape gets the same descriptor); the key has
# the stream so that a buffer is only read by kernels on the stream its copy and its eventual free (PyTorch's
# allocator, stream-ordered) are on. A miss costs the encoding (about a microsecond a map on the host), a
# pinned block and a device block from PyTorch's caches, and one asynchronous copy: tens of microseconds of
# host time, beside kernels of milliseconds; a hit, a tuple and a dict lookup. In a training loop PyTorch's
# allocator hands the same addresses back step after step, so the steady state hits. TENSOR_MAP_CACHE entries
# are kept (0: made per call, freed once launched).

TENSOR_MAP_TYPES = {"f32": (7, 4), "f16": (6, 2), "bf16": (9, 2)}  # cuTensorMapEncodeTiled's data type, bytes
TENSOR_MAP_BYTES = 128
TENSOR_MAP_CACHE = 256


def tensor_map_problem(address, rows, cols, box_rows, box_cols, type_name):
    """Why the tensor memory accelerator cannot copy a row-major rows × cols tensor of `type_name` at `address`
    in boxes of box_rows × box_cols (createTensorMap's rules: a box row at most one 128-byte swizzle row, at
    most 256 box rows, rows of a multiple of 16 bytes, a 16-byte aligned address); None if it can."""
    if type_name not in TENSOR_MAP_TYPES:
        return f"tensor maps describe f32, f16 or bf16 tensors, not {type_name}"
    size = TENSOR_MAP_TYPES[type_name][1]
    if not all(isinstance(v, int) and v > 0 for v in (rows, cols, box_rows, box_cols)):
        return f"rows, cols and the box must be positive integers, got {rows} × {cols} in boxes of {box_rows} × {box_cols}"
    if box_cols * size > 128 or box_rows > 256:
        return f"a box is at most 256 rows of {128 // size} {type_name} (one 128-byte swizzle row), got {box_rows} × {box_cols}"
    if (cols * size) % 16:
        return f"rows of {cols} {type_name} are not a multiple of 16 bytes"
    if address % 16:
        return f"the tensor's address {address:#x} is not 16-byte aligned"
    if rows >= 2**32 or cols >= 2**32:
        return f"{rows} × {cols} is too large for a tensor map"
    return None


class TensorMaps:
    """Tensor maps in device memory, made per launch group and cached (see above)."""

    def __init__(self, limit=None):
        import collections

        self.limit = TENSOR_MAP_CACHE if limit is None else limit
        self.cached = collections.OrderedDict()
        self.lock = threading.Lock()
        self.made = 0  # buffers made (misses), for tests and measurements

    def clear(self):
        with self.lock:
            self.cached.clear()

    def addresses(self, torch, device, stream, specs):
        """(buffer, addresses): the device addresses of the maps `specs` describes, each (tensor address, rows,
        cols, box rows, box cols, type name), in one buffer that the caller keeps alive until the kernels that
        read it are launched (after that, PyTorch's stream-ordered allocator keeps its memory from other uses
        until they have run)."""
        specs = tuple(specs)
        key = (device.index, stream, specs)
        with self.lock:
            entry = self.cached.get(key)
            if entry is not None:
                self.cached.move_to_end(key)
                return entry
        for spec in specs:
            problem = tensor_map_problem(*spec)
            if problem is not None:
                raise TskernelError(f"tensor map: {problem}")
        cuda = driver()
        image = b"".join(cuda.encode_tensor_map(*spec) for spec in specs)
        host = torch.frombuffer(bytearray(image), dtype=torch.uint8)
        if torch.cuda.is_available():
            host = host.pin_memory()
        buffer = host.to(device, non_blocking=True)
        base = buffer.data_ptr()
        entry = (buffer, tuple(base + TENSOR_MAP_BYTES * i for i in range(len(specs))))
        self.made += 1
        if self.limit > 0:
            with self.lock:
                self.cached[key] = entry
                while len(self.cached) > self.limit:
                    self.cached.popitem(last=False)
        return entry


tensor_maps = TensorMaps()


def tensor_map_of(tensor, rows, cols, box_rows, box_cols):
    """The spec of a map of a contiguous 16-bit or f32 tensor read as rows × cols (TensorMaps.addresses)."""
    return (tensor.data_ptr(), rows, cols, box_rows, box_cols, _type_name_of(tensor))


_TYPE_NAMES = {"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16"}


def _type_name_of(tensor):
    return _TYPE_NAMES.get(str(tensor.dtype), str(tensor.dtype))


# ---- the prebuilt kernels: matmul's 16-bit rungs and attention ------------------------------------------------
#
# Kernels that take tensor maps or a grid the GPU's size decides cannot declare their launch yet (docs/torch.md
# §1), so no generated module launches them: this runtime does, from the same build. It reads the build's
# manifest.json (in TSKERNEL_TORCH_KERNELS, else beside this file), which names each specialization's function,
# block, dynamic shared memory, parameters and cubin or PTX, and launches them as the runtime's matmul() and
# attention() do (runtime/matmul, runtime/attention.ts).

PREBUILT_FILES = ("examples/hgemm-wgmma-ws.ts", "examples/hgemm-wgmma-small.ts", "examples/hgemm-mma-guarded.ts", "examples/hgemm-tiled.ts", "examples/flash-attention-fold.ts", "examples/flash-attention-backward.ts")
# The forward kernel of attention, as runtime/attention.ts's attentionForwardKernel: P kept in registers, the
# scale folded into each exponential.
ATTENTION_FORWARD = ("flashAttentionFold", "examples/flash-attention-fold.ts")


class RawKernel:
    """One specialization of a prebuilt kernel: launched with its parameters' values in order."""

    def __init__(self, images, name, function, block, shared_bytes, constants, types, type_args=None):
        self.images = images
        self.name = name
        self.function = function
        self.block = tuple(block)
        self.shared_bytes = shared_bytes
        self.constants = dict(constants)
        # A kernel over element types (examples/hgemm-mma-guarded.ts): what each type parameter is in this build.
        self.type_args = dict(type_args or {})
        self.types = tuple(types)  # each parameter's ElementType, None for a buffer (its address)
        self.loaded = {}  # device index -> (context, CUfunction, ArgumentPack)

    def launch(self, index, grid, stream, values):
        grid = check_grid(self.name, grid)
        if grid is not None:
            self.launch_grid(index, grid, stream, values)

    def launch_grid(self, index, grid, stream, values):
        """launch() with a grid check_grid has passed already (three ints, none 0)."""
        cuda = driver()
        loaded = self.loaded.get(index)
        if loaded is None:
            context, module = cuda.load(index, self.images)
            function = cuda.function(module, self.function, self.shared_bytes)
            loaded = (context, function, ArgumentPack([ctypes.c_void_p if t is None else t.ctype for t in self.types], function))
            self.loaded[index] = loaded
        context, function, pack = loaded
        block = self.block
        with pack.lock:
            for slot, t, value in zip(pack.values, self.types, values):
                slot.value = value if t is None else t.convert(value)
            cuda.get_current(pack.current_pointer)
            if pack.current.value != context:
                launch_packed(cuda, context, function, self.function, grid, block, self.shared_bytes, stream, pack)
                return
            # PyTorch's context is current (the usual case): the entry point without argtypes, as the fast launcher calls it.
            code = cuda.launch_kernel_raw(pack.function, grid[0], grid[1], grid[2], block[0], block[1], block[2], self.shared_bytes, ctypes.c_void_p(stream), pack.array, None)
        if code != 0:
            cuda.check(f"cuLaunchKernel({self.function})", code)


class Prebuilt:
    """The kernels of a build directory's manifest.json, by name and constants."""

    def __init__(self, directory):
        import json

        self.directory = directory
        with open(os.path.join(directory, "manifest.json")) as f:
            manifest = json.load(f)
        images = {}
        self.kernels = {}
        # tskernel::matmul16's choices by (device, architecture, f16, m, n, k, aligned): _matmul16_plan.
        self.matmul16_plans = {}
        for k in manifest.get("kernels", ()):
            cuda = (k.get("outputs") or {}).get("cuda")
            if not cuda or not (cuda.get("cubin") or cuda.get("ptx")) or not k.get("block"):
                continue
            image = images.setdefault(cuda["file"], Images(directory))
            if cuda.get("cubin"):
                image.cubins[cuda["cubin"]["arch"]] = cuda["cubin"]["file"]
            if cuda.get("ptx"):
                image.ptx[cuda["ptx"]["arch"]] = cuda["ptx"]["file"]
            specialization = k.get("specialization") or {}
            constants = {name: v for name, v in specialization.items() if not isinstance(v, str)}
            type_args = {name: v for name, v in specialization.items() if isinstance(v, str)}
            types = [None if p["kind"] == "buffer" else TYPES[p["type"]] for p in k["params"] if p["kind"] != "const"]
            kernel = RawKernel(image, k["name"], cuda["function"], k["block"], cuda.get("dynamicSharedBytes", 0), constants, types, type_args)
            self.kernels.setdefault(k["name"], []).append(kernel)

    def find(self, name, **constants):
        """The build of kernel `name` with these constants (and type arguments: T="bf16"), or None."""
        for kernel in self.kernels.get(name, ()):
            if all({**kernel.constants, **kernel.type_args}.get(c) == v for c, v in constants.items()):
                return kernel
        return None

    def need(self, name, what, **constants):
        kernel = self.find(name, **constants)
        if kernel is None:
            wanted = " with " + ", ".join(f"{c} = {v}" for c, v in constants.items()) if constants else ""
            raise TskernelError(f"the build in {self.directory} has no {name}{wanted}: build {what} into it ({prebuilt_build_command()})")
        return kernel


def kernel_directory():
    """Where the prebuilt kernels are: TSKERNEL_TORCH_KERNELS, else this file's directory (a --target torch build)."""
    return os.environ.get("TSKERNEL_TORCH_KERNELS") or os.path.dirname(os.path.abspath(__file__))


def prebuilt_build_command():
    return f"tskernel build {' '.join(PREBUILT_FILES)} --target torch --cubin --arch sm_90 --out {kernel_directory()}"


_prebuilt = None


def prebuilt():
    global _prebuilt
    if _prebuilt is None:
        directory = kernel_directory()
        if not os.path.exists(os.path.join(directory, "manifest.json")):
            raise TskernelError(f"tskernel_torch's matmul (bf16, f16) and attention need the prebuilt kernels, and {directory} has no manifest.json: {prebuilt_build_command()}")
        _prebuilt = Prebuilt(directory)
    return _prebuilt


# ---- the operator -------------------------------------------------------------------------------------------


def _current_stream_function():
    """A function of a device index that returns PyTorch's current raw stream there: the private one Triton
    uses too, which costs far less than building a torch.cuda.Stream, else the public one."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda index: torch.cuda.current_stream(index).cuda_stream


class Kernel:
    """A kernel as an operator: `launch(*arguments)` checks, allocates, launches and returns the outputs (one
    tensor, a tuple of several, or None); `fake(*arguments)` returns outputs of the right shapes only, for
    torch.compile's tracing. The arguments are the kernel's input and mutated tensors and its scalar
    arguments, in parameter order."""

    def __init__(self, images, op, params, specializations):
        self.images = images
        self.op = op
        self.params = tuple(params)
        self.specializations = tuple(specializations)
        self.arguments = tuple(p for p in self.params if not (isinstance(p, Size) or (isinstance(p, Tensor) and p.is_output)))
        self.outputs = tuple(p for p in self.params if isinstance(p, Tensor) and p.is_output)
        self._ctypes = tuple(ctypes.c_void_p if isinstance(p, Tensor) else p.type.ctype for p in self.params)
        self._torch = None
        self._fast = None
        named = {d for p in self.params if isinstance(p, Tensor) for d in p.dims if isinstance(d, str)}
        for spec in self.specializations:
            spec.dim_constants = tuple((k, v) for k, v in spec.constants.items() if k in named)

    def _prepare(self, torch):
        self._torch = torch
        self._dtypes = {}
        for p in self.params:
            if isinstance(p, Tensor):
                dtype = getattr(torch, p.type.torch_name, None)
                if dtype is None:
                    raise TskernelError(f"{self.op}: parameter '{p.name}' is {p.type.name}, and this PyTorch ({torch.__version__}) has no torch.{p.type.torch_name}")
                self._dtypes[p.name] = dtype
        self._stream = _current_stream_function()

    def _bind(self, args):
        """Checks the arguments; returns (sizes, rests, values by name, the device of the tensors)."""
        torch = self._torch
        if len(args) != len(self.arguments):
            names = ", ".join(p.name for p in self.arguments)
            raise TskernelError(f"{self.op}: expects {len(self.arguments)} argument(s) ({names}), got {len(args)}")
        sizes, rests, sources, values = {}, {}, {}, {}
        device = None
        first = None
        for param, value in zip(self.arguments, args):
            if isinstance(param, Tensor):
                if not isinstance(value, torch.Tensor):
                    raise TskernelError(f"{self.op}: parameter '{param.name}' expects a tensor, got {type(value).__name__}")
                dtype = self._dtypes[param.name]
                if value.dtype != dtype:
                    raise TskernelError(f"{self.op}: parameter '{param.name}' expects a {str(dtype)[6:]} tensor ({param.type.name}), got {str(value.dtype)[6:]}")
                if value.device.type != "cuda":
                    raise TskernelError(f"{self.op}: parameter '{param.name}' must be on a CUDA device, got {value.device}")
                if device is None:
                    device, first = value.device, param.name
                elif value.device != device:
                    raise TskernelError(f"{self.op}: parameter '{param.name}' is on {value.device}, but '{first}' is on {device}")
                if not value.is_contiguous():
                    raise TskernelError(f"{self.op}: parameter '{param.name}' must be contiguous (call .contiguous() on it)")
                bind_shape(self.op, param, value.shape, sizes, rests, sources)
            else:
                value = check_scalar(self.op, param, value)
                if param.type.kind == "int":
                    sizes[param.name] = value
            values[param.name] = value
        if device is None:
            raise TskernelError(f"{self.op}: has no tensor argument to take a device from")
        return sizes, rests, values, device

    def _allocate(self, sizes, rests, device, constants):
        torch = self._torch
        made = []
        for p in self.outputs:
            shape = output_shape(p, sizes, rests, constants)
            make = torch.zeros if p.role == "zeroed output" else torch.empty
            made.append(make(shape, dtype=self._dtypes[p.name], device=device))
        return made

    @staticmethod
    def _result(outputs):
        if not outputs:
            return None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def fake(self, *args):
        if self._torch is None:
            import torch

            self._prepare(torch)
        sizes, rests, _, device = self._bind(args)
        # Only an output shaped by a constant ("[BINS]") needs the specialization; otherwise the requirements
        # are not evaluated, which under torch.compile's symbolic sizes would add guards for nothing.
        needs_constants = any(isinstance(d, str) and d in self.specializations[0].constants for p in self.outputs for d in p.dims)
        spec = choose(self.op, self.specializations, sizes) if needs_constants else self.specializations[0]
        return self._result(self._allocate(sizes, rests, device, spec.constants))

    def launch(self, *args):
        """Checks, allocates, launches; returns the outputs. After the first launch on a device, a launcher
        made for this kernel's parameters (fast_launcher) takes calls whose arguments it can check quickly, and
        hands everything else (errors included) back here."""
        fast = self._fast
        if fast is not None:
            return fast(*args)
        return self.checked_launch(*args)

    def checked_launch(self, *args):
        if self._torch is None:
            import torch

            self._prepare(torch)
        sizes, rests, values, device = self._bind(args)
        spec = choose(self.op, self.specializations, sizes)
        outputs = self._allocate(sizes, rests, device, spec.constants)
        for p, t in zip(self.outputs, outputs):
            values[p.name] = t
        grid = check_grid(self.op, spec.grid(sizes))
        if grid is not None:
            self._launch(spec, device.index, grid, sizes, values)
            if self._fast is None:
                self._fast = fast_launcher(self)
        return self._result(outputs)

    def _launch(self, spec, index, grid, sizes, values):
        cuda = driver()
        loaded = spec.functions.get(index)
        if loaded is None:
            context, module = cuda.load(index, self.images)
            function = cuda.function(module, spec.function, spec.shared_bytes)
            loaded = (context, function, ArgumentPack(self._ctypes, function))
            spec.functions[index] = loaded
        context, function, pack = loaded
        stream = self._stream(index)
        block = spec.block
        with pack.lock:
            for slot, p in zip(pack.values, self.params):
                if isinstance(p, Tensor):
                    slot.value = values[p.name].data_ptr()
                elif isinstance(p, Size):
                    slot.value = p.type.convert(sizes[p.name])
                else:
                    slot.value = p.type.convert(values[p.name])
            launch_packed(cuda, context, function, spec.function, grid, block, spec.shared_bytes, stream, pack)


class Dispatch:
    """An operator over several builds of one kernel, one Kernel per combination of element types (`T: "f32"`,
    `T: "bf16"`), in the order of their first specialization: a call goes to the build whose input and mutated
    tensors have the arguments' dtypes (which then picks its specialization by the sizes, allocates outputs of
    its types and launches), and is an error naming the dtypes given and those each specialization takes when
    none has them. `fake` picks the same way, so torch.compile sees outputs of the chosen build's types. The
    generator checks that no two builds take the same input types (TSK4016)."""

    def __init__(self, op, kernels):
        self.op = op
        self.kernels = tuple(kernels)
        first = self.kernels[0]
        self.arguments = first.arguments
        self.outputs = first.outputs
        self._tensors = tuple(i for i, p in enumerate(self.arguments) if isinstance(p, Tensor))
        self._by_dtypes = None  # (torch dtype of each input tensor) -> Kernel, made on the first call
        # Every build's specializations, in order (the f32 build's first where it is first, as one type's Kernel).
        self.specializations = tuple(spec for kernel in self.kernels for spec in kernel.specializations)

    def _table(self):
        import torch

        table = {}
        for kernel in self.kernels:
            key = tuple(getattr(torch, kernel.arguments[i].type.torch_name, None) for i in self._tensors)
            table.setdefault(key, kernel)
        self._by_dtypes = table
        # A launch written for this operator's tensor positions (a generator and tuple() over them cost 0.9 µs
        # a call more than a Kernel's own launch on a 2-core development host, with stubs; this, 0.25): it
        # becomes this object's `launch`, and hands anything it does not expect (a dtype no build takes, a
        # non-tensor, a wrong count) to the general path, which reports it. It calls the build's fast launcher
        # itself once there is one, a Python call fewer than Kernel.launch (on the H100's host, 2026-11-27, the
        # generated gelu took 11.2–12.3 µs a call through this, Kernel.launch alone 10.0–10.3).
        key = "".join(f"args[{i}].dtype, " for i in self._tensors)
        source = (
            "def launch(*args):\n"
            f"    if len(args) != {len(self.arguments)}: return slow(*args)\n"
            "    try:\n"
            f"        kernel = get(({key}))\n"
            "    except AttributeError:\n"
            "        return slow(*args)\n"
            "    if kernel is None: return slow(*args)\n"
            "    fast = kernel._fast\n"
            "    if fast is None: return kernel.launch(*args)\n"
            "    return fast(*args)\n"
        )
        env = {"get": table.get, "slow": self._slow_launch}
        exec(source, env)
        self.launch = env["launch"]
        return table

    def pick(self, args):
        """The build for these arguments' dtypes. A call it cannot read (a wrong count, a non-tensor) goes to
        the first build, whose checks name what is wrong."""
        table = self._by_dtypes or self._table()
        if len(args) != len(self.arguments):
            return self.kernels[0]
        try:
            key = tuple(args[i].dtype for i in self._tensors)
        except AttributeError:
            return self.kernels[0]
        kernel = table.get(key)
        if kernel is None:
            raise TskernelError(self.mismatch(key))
        return kernel

    def mismatch(self, dtypes):
        """The error of a call whose dtypes no build takes: what it gave, and what each specialization takes."""
        names = [self.arguments[i].name for i in self._tensors]
        given = ", ".join(f"{n} {str(d).replace('torch.', '')}" for n, d in zip(names, dtypes))
        takes = "; ".join(
            f"{spec.function}: " + ", ".join(f"{n} {kernel.arguments[i].type.torch_name}" for n, i in zip(names, self._tensors))
            for kernel in self.kernels
            for spec in kernel.specializations
        )
        return f"{self.op}: no specialization takes these dtypes ({given}); they take: {takes}"

    def launch(self, *args):
        """The build of the arguments' dtypes launched. Only the first call (or one before anything else made
        the table) comes here: _table() puts the launch it writes in this method's place on the object."""
        self._table()
        return self.launch(*args)

    def _slow_launch(self, *args):
        return self.pick(args).launch(*args)

    def checked_launch(self, *args):
        return self.pick(args).checked_launch(*args)

    def fake(self, *args):
        return self.pick(args).fake(*args)


# ---- the fast launcher ---------------------------------------------------------------------------------------
#
# The generic path above loops over parameter descriptions, builds dicts and formats nothing until an error;
# still, it costs about 18 µs a call on an H100 host (bench/results/2026-11-26-torch-ops-h100-run1.json), three
# times PyTorch's own GELU. So once a kernel has launched, a function written for its parameters (as Triton
# writes its launchers) takes over: straight-line checks of types, dtypes, devices, contiguity and shapes that
# bind the sizes into locals, the specialization, the outputs, the grid, the argument values and the launch.
# Whatever it does not expect (an error to report, a device it has not loaded, another context current, an
# empty or too large grid) it hands to the generic path, which reports or handles it; so it never changes
# what a call does, only how fast a well-formed one goes.


def _identifier(name):
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)


def fast_launcher(kernel):
    """The fast launcher of a kernel that has launched once (its dtypes, driver and stream are set up)."""
    torch = kernel._torch
    cuda = driver()
    env = {
        "TorchTensor": torch.Tensor,
        "empty": torch.empty,
        "zeros": torch.zeros,
        "empty_like": torch.empty_like,
        "zeros_like": torch.zeros_like,
        "slow": kernel.checked_launch,
        "specs": kernel.specializations,
        "product": _product,
        "launch_kernel": cuda.launch_kernel_raw,
        "void_p": ctypes.c_void_p,
        "get_current": cuda.get_current,
        "check": cuda.check,
        "stream_of": kernel._stream,
    }
    names = [f"a{i}" for i in range(len(kernel.arguments))]
    fallback = f"return slow({', '.join(names)})"
    body = []
    size_var = {}  # size name -> local holding it
    rest_var = {}  # size name of a ...name -> local holding the dims it covered
    tensor_var = {}  # parameter name -> local holding the tensor
    device = None
    for index, (param, a) in enumerate(zip(kernel.arguments, names)):
        if isinstance(param, Tensor):
            env[f"dt{index}"] = kernel._dtypes[param.name]
            tensor_var[param.name] = a
            body.append(f"if not isinstance({a}, TorchTensor) or {a}.dtype is not dt{index} or not {a}.is_cuda or not {a}.is_contiguous(): {fallback}")
            if device is None:
                device = a
                body.append(f"d = {a}.get_device()")
            else:
                body.append(f"if {a}.get_device() != d: {fallback}")
            shape = f"s{index}"
            body.append(f"{shape} = {a}.shape")
            dims = param.dims
            if param.rest_at is None:
                body.append(f"if len({shape}) != {len(dims)}: {fallback}")
            else:
                body.append(f"if len({shape}) < {len(dims) - 1}: {fallback}")
            for j, dim in enumerate(dims):
                # Dims after a ...name are counted from the end.
                at = j if param.rest_at is None or j < param.rest_at else j - len(dims)
                if j == param.rest_at:
                    name = dim[3:]
                    after = len(dims) - j - 1
                    covered = f"{shape}[{j}:{'' if after == 0 else -after}]"
                    if name in rest_var:
                        body.append(f"if {covered} != {rest_var[name]}: {fallback}")
                        continue
                    rest = f"r_{_identifier(name)}"
                    body.append(f"{rest} = {covered}")
                    rest_var[name] = rest
                    value = f"{a}.numel()" if len(dims) == 1 else f"product({rest})"
                elif isinstance(dim, int):
                    body.append(f"if {shape}[{at}] != {dim}: {fallback}")
                    continue
                else:
                    name, value = dim, f"{shape}[{at}]"
                if name in size_var:
                    body.append(f"if {value} != {size_var[name]}: {fallback}")
                else:
                    var = f"z_{_identifier(name)}"
                    body.append(f"{var} = {value}")
                    size_var[name] = var
        else:
            kind = param.type.kind
            if kind == "bool":
                body.append(f"if type({a}) is not bool: {fallback}")
            elif kind == "int":
                body.append(f"if type({a}) is not int or not {param.type.low} <= {a} <= {param.type.high}: {fallback}")
                size_var[param.name] = a
            else:
                body.append(f"if type({a}) is not float and type({a}) is not int: {fallback}")
    body.append("s = {" + ", ".join(f"{n!r}: {v}" for n, v in size_var.items()) + "}")
    specs = kernel.specializations
    if len(specs) == 1 and not specs[0].requires and not specs[0].dim_constants:
        body.append("spec = specs[0]")
    else:
        body.append("for spec in specs:")
        body.append("    if spec.accepts(s): break")
        body.append(f"else: {fallback}")
    body.append("entry = spec.functions.get(d)")
    body.append(f"if entry is None: {fallback}")
    # The outputs: like an input of the same dims and type where there is one, else from the sizes.
    results = []
    for k, out in enumerate(kernel.outputs):
        var = f"o{k}"
        results.append(var)
        tensor_var[out.name] = var
        zeroed = out.role == "zeroed output"
        twin = next((p for p in kernel.arguments if isinstance(p, Tensor) and p.dims == out.dims and p.type is out.type), None)
        if twin is not None:
            body.append(f"{var} = {'zeros_like' if zeroed else 'empty_like'}({tensor_var[twin.name]})")
            continue
        env[f"odt{k}"] = kernel._dtypes[out.name]
        parts = []
        for j, dim in enumerate(out.dims):
            if j == out.rest_at:
                name = dim[3:]
                parts.append(f"*{rest_var[name]}" if name in rest_var else size_var[name])
            elif isinstance(dim, int):
                parts.append(str(dim))
            elif dim in size_var:
                parts.append(size_var[dim])
            else:
                parts.append(f"spec.constants[{dim!r}]")
        shape = f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
        body.append(f"{var} = {'zeros' if zeroed else 'empty'}({shape}, dtype=odt{k}, device={device}.device)")
    result = "None" if not results else results[0] if len(results) == 1 else f"({', '.join(results)})"
    body.append("g0, g1, g2 = spec.grid(s)")
    body.append(f"if not (0 < g0 <= {GRID_LIMITS[0]} and 0 < g1 <= {GRID_LIMITS[1]} and 0 < g2 <= {GRID_LIMITS[2]}): {fallback}")
    body.append("context, function, pack = entry")
    body.append("function = pack.function")
    body.append("b0, b1, b2 = spec.block")
    body.append("values = pack.values")
    body.append("with pack.lock:")
    for slot, p in enumerate(kernel.params):
        if isinstance(p, Tensor):
            value = f"{tensor_var[p.name]}.data_ptr()"
        elif isinstance(p, Size):
            value = size_var[p.name]
        else:
            value = names[kernel.arguments.index(p)]
            # A 16-bit float scalar goes as its bits; a tensor of such elements is its address like any other.
            if p.type.name in ("f16", "bf16"):
                env[f"convert{slot}"] = p.type.convert
                value = f"convert{slot}({value})"
        body.append(f"    values[{slot}].value = {value}")
    body.append("    get_current(pack.current_pointer)")
    body.append(f"    if pack.current.value != context: {fallback}")
    body.append("    code = launch_kernel(function, g0, g1, g2, b0, b1, b2, spec.shared_bytes, void_p(stream_of(d)), pack.array, None)")
    body.append("if code != 0: check(f'cuLaunchKernel({spec.function})', code)")
    body.append(f"return {result}")
    source = f"def fast({', '.join(names)}):\n" + "".join(f"    {line}\n" for line in body)
    exec(compile(source, f"<tskernel fast launcher of {kernel.op}>", "exec"), env)
    fast = env["fast"]
    fast.source = source
    return fast


# ---- routes: when to go through PyTorch's dispatcher --------------------------------------------------------
#
# A generated operator is a torch.library custom op, which is what torch.compile, export, opcheck and the
# dispatcher's modes (fake tensors, functionalization, vmap) need. Through the dispatcher a call costs tens of
# microseconds of Python on the host (the custom op's autograd and backend layers), so an eager call on plain
# tensors launches directly instead: with the kernel's fast launcher when no gradient is wanted, else through
# a torch.autograd.Function with the same gradients. Everything else goes through the dispatcher.

DISPATCH, LAUNCH, AUTOGRAD = "dispatch", "launch", "autograd"
_route_checks = None


def _setup_routes(torch):
    global _route_checks
    c = torch._C
    modes = [f for f in (getattr(c, "_len_torch_dispatch_stack", None), getattr(c, "_is_torch_function_mode_enabled", None), getattr(c, "_are_functorch_transforms_active", None)) if f is not None]
    _route_checks = (torch.compiler.is_compiling, tuple(modes), (torch.Tensor, torch.nn.Parameter), torch.is_grad_enabled)


def route(*tensors):
    """DISPATCH under torch.compile, inside a dispatch or function mode or a functorch transform, or for
    tensor subclasses; else AUTOGRAD when a gradient is wanted, else LAUNCH."""
    compiling, modes, plain, grad_enabled = _route_checks
    if compiling():
        return DISPATCH
    for active in modes:
        if active():
            return DISPATCH
    wants = False
    for t in tensors:
        if type(t) not in plain:
            return DISPATCH
        wants = wants or t.requires_grad
    return AUTOGRAD if wants and grad_enabled() else LAUNCH


def eager_autograd(launch, setup_context, gradients):
    """A torch.autograd.Function's apply that launches directly, with the gradients the custom op registers."""
    import torch

    class Function(torch.autograd.Function):
        @staticmethod
        def forward(*args):
            return launch(*args)

        @staticmethod
        def setup_context(ctx, inputs, output):
            setup_context(ctx, inputs, output)

        @staticmethod
        def backward(ctx, *grads):
            return gradients(ctx, *grads)

    return Function.apply


def require_custom_ops(torch):
    """PyTorch's custom-operator API came with 2.4: name the version found instead of an AttributeError."""
    if not hasattr(torch.library, "custom_op") or not hasattr(torch.library, "register_autograd"):
        raise ImportError(f"tskernel's PyTorch modules need PyTorch 2.4 or later (torch.library.custom_op); this is torch {torch.__version__}")
    _setup_routes(torch)
    builtin_ops(torch)


# ---- matmul and attention ------------------------------------------------------------------------------------
#
# The runtime's matmul() and attention() as PyTorch operators: FP32 through the SGEMM operators a build
# generates (sgemm_multistage.py), bf16 and f16 and attention through the prebuilt kernels above, each a custom
# operator of the namespace "tskernel" with a fake implementation (torch.compile traces them), matmul and
# attention with their gradients. They are registered by require_custom_ops, which every generated module
# calls when it is imported (or call it yourself before torch.compile traces a first call).

_sgemm = None
_builtin = None
_builtin_lock = threading.RLock()
_multiprocessors = {}
ATTENTION_ROWS = 128  # the FlashAttention kernels' query (and key) rows a block: seq must be a multiple
ATTENTION_HEAD_DIMS = (64, 128)


class _Ops:
    """The registered operators (attributes named as the functions below) and the torch they belong to."""


def builtin_ops(torch):
    """Registers tskernel::matmul16, tskernel::attention_forward and tskernel::attention_backward (once per torch
    module) and returns them."""
    global _builtin
    ops = _builtin
    if ops is not None and ops.torch is torch:
        return ops
    with _builtin_lock:
        if _builtin is not None and _builtin.torch is torch:
            return _builtin
        ops = _Ops()
        ops.torch = torch
        if _route_checks is None:
            _setup_routes(torch)
        # Another copy of this file imported under another name (a package's and a top-level one) registered
        # them already: the operators are PyTorch's, one per process, so that copy's serve this one too.
        registered = getattr(getattr(getattr(torch, "_library", None), "custom_ops", None), "OPDEFS", None)
        if registered is not None and "tskernel::matmul16" in registered:
            ops.matmul16 = registered["tskernel::matmul16"]
            ops.attention_forward = registered["tskernel::attention_forward"]
            ops.attention_backward = registered["tskernel::attention_backward"]
            ops.matmul16_eager = ops.attention_forward_eager = None
            _builtin = ops
            return ops
        custom_op = torch.library.custom_op

        def matmul16_impl(a, b):
            return _matmul16(torch, a, b)

        ops.matmul16 = custom_op("tskernel::matmul16", mutates_args=(), schema="(Tensor a, Tensor b) -> Tensor")(matmul16_impl)

        @ops.matmul16.register_fake
        def _(a, b):
            _check_matmul16(torch, "tskernel::matmul16", a, b)
            return torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)

        def matmul16_setup(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        def matmul16_gradients(ctx, grad):
            a, b = ctx.saved_tensors
            grad = contiguous(grad)
            needs = getattr(ctx, "needs_input_grad", (True, True))
            product = lambda x, y: _routed(torch, (x, y), _matmul16, ops.matmul16_eager, ops.matmul16, x, y)  # noqa: E731
            return (product(grad, b.t().contiguous()) if needs[0] else None, product(a.t().contiguous(), grad) if needs[1] else None)

        ops.matmul16.register_autograd(matmul16_gradients, setup_context=matmul16_setup)
        ops.matmul16_eager = eager_autograd(lambda a, b: _matmul16(torch, a, b), matmul16_setup, matmul16_gradients)

        def forward_impl(q, k, v, causal, scale):
            return _attention_forward(torch, q, k, v, causal, scale)

        ops.attention_forward = custom_op(
            "tskernel::attention_forward", mutates_args=(), schema="(Tensor q, Tensor k, Tensor v, bool causal, float scale) -> (Tensor, Tensor)"
        )(forward_impl)

        @ops.attention_forward.register_fake
        def _(q, k, v, causal, scale):
            b, h, s, _d = _check_attention(torch, "tskernel::attention", (("q", q), ("k", k), ("v", v)))
            return torch.empty_like(q), torch.empty((b, h, s), dtype=torch.float32, device=q.device)

        def backward_impl(q, k, v, out, lse, grad_out, causal, scale):
            return _attention_backward(torch, q, k, v, out, lse, grad_out, causal, scale)

        ops.attention_backward = custom_op(
            "tskernel::attention_backward",
            mutates_args=(),
            schema="(Tensor q, Tensor k, Tensor v, Tensor out, Tensor lse, Tensor grad_out, bool causal, float scale) -> (Tensor, Tensor, Tensor)",
        )(backward_impl)

        @ops.attention_backward.register_fake
        def _(q, k, v, out, lse, grad_out, causal, scale):
            _check_attention(torch, "tskernel::attention_backward", (("q", q), ("k", k), ("v", v), ("out", out), ("grad_out", grad_out)))
            return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)

        def attention_setup(ctx, inputs, output):
            q, k, v, causal, scale = inputs
            out, lse = output
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.causal, ctx.scale = causal, scale

        def attention_gradients(ctx, grad_out, _grad_lse):
            # The log-sum-exps are what the backward needs, not a result with gradients of its own.
            q, k, v, out, lse = ctx.saved_tensors
            grad_out = contiguous(grad_out)
            dq, dk, dv = _routed(torch, (q, k, v, out, lse, grad_out), _attention_backward, None, ops.attention_backward, q, k, v, out, lse, grad_out, ctx.causal, ctx.scale)
            return dq, dk, dv, None, None

        ops.attention_forward.register_autograd(attention_gradients, setup_context=attention_setup)
        ops.attention_forward_eager = eager_autograd(lambda q, k, v, causal, scale: _attention_forward(torch, q, k, v, causal, scale), attention_setup, attention_gradients)
        _builtin = ops
        return ops


def _check_cuda_tensors(op, named):
    """CUDA, one device, contiguous: the checks every prebuilt launch makes, naming the parameter."""
    device, first = None, None
    for name, t in named:
        if t.device.type != "cuda":
            raise TskernelError(f"{op}: parameter '{name}' must be on a CUDA device, got {t.device}")
        if device is None:
            device, first = t.device, name
        elif t.device != device:
            raise TskernelError(f"{op}: parameter '{name}' is on {t.device}, but '{first}' is on {device}")
        if not t.is_contiguous():
            raise TskernelError(f"{op}: parameter '{name}' must be contiguous (call .contiguous() on it)")


def _check_matmul16(torch, op, a, b):
    if a.dim() != 2 or b.dim() != 2:
        raise TskernelError(f"{op}: expects two matrices, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype not in (torch.bfloat16, torch.float16):
        raise TskernelError(f"{op}: parameter 'a' expects a bfloat16 or float16 tensor, got {str(a.dtype)[6:]}")
    if b.dtype != a.dtype:
        raise TskernelError(f"{op}: parameter 'b' is {str(b.dtype)[6:]}, but 'a' is {str(a.dtype)[6:]} (both must be one type)")
    if a.shape[1] != b.shape[0]:
        raise TskernelError(f"{op}: a is {a.shape[0]}×{a.shape[1]} and b {b.shape[0]}×{b.shape[1]}: a's columns must be b's rows")
    for name, size in (("m", a.shape[0]), ("k", a.shape[1]), ("n", b.shape[1])):
        if size >= 2**31:
            raise TskernelError(f"{op}: {name} = {size} does not fit the kernels' i32 sizes")
    _check_cuda_tensors(op, (("a", a), ("b", b)))


def _stream_of(index):
    return _current_stream_function()(index)


def _multiprocessors_of(index):
    count = _multiprocessors.get(index)
    if count is None:
        count = _multiprocessors[index] = driver().multiprocessors(index)
    return count


def matmul16_rung(kernels, arch, m, n, k, aligned, f16, multiprocessors=None):
    """The 16-bit rung for an m×n×k product, as runtime/matmul's fixed rule picks it: the warp-specialized
    wgmma kernel (examples/hgemm-wgmma-ws.ts) on an sm_90 GPU where n and k are multiples of 8 (the tensor
    maps' rows are whole 16-byte units; tiles at the edges are partial) and the operands' addresses are 16-byte
    aligned, as tensor maps need, in its 64×128 tiles (examples/hgemm-wgmma-small.ts) where its 128×256 tiles
    number fewer than three quarters of the GPU's `multiprocessors`; else, on GPUs from sm_80 with aligned operands (its
    16-byte copies start on multiples of 8 elements), the warp-level kernel for any shape
    (examples/hgemm-mma-guarded.ts, mma_build); else the tiled kernel (examples/hgemm-tiled.ts), which takes any
    shape. A build without a kernel of the first ones passes on to the next. Returns (rung name, kernel)."""
    suffix = "-f16" if f16 else ""
    if arch == "sm_90" and k > 0 and n % 8 == 0 and k % 8 == 0 and aligned:
        if multiprocessors is not None and 4 * cdiv(m, 128) * cdiv(n, 256) < 3 * multiprocessors:
            small = kernels.find("hgemmWgmmaSmall", T="f16" if f16 else "bf16")
            if small is not None:
                return "hgemm-wgmma-small" + suffix, small
        wgmma = kernels.find("hgemmWgmmaWsF16" if f16 else "hgemmWgmmaWs")
        if wgmma is not None:
            return "hgemm-wgmma-ws" + suffix, wgmma
    capability = arch[3:] if arch.startswith("sm_") else ""
    if aligned and capability.isdigit() and int(capability) >= 80:
        mma = mma_build(kernels, m, n, "f16" if f16 else "bf16")
        if mma is not None:
            return "hgemm-mma-guarded" + suffix, mma
    return "hgemm-tiled" + suffix, kernels.need("hgemmTiledF16" if f16 else "hgemmTiledBf16", "examples/hgemm-tiled.ts")


def mma_build(kernels, m, n, dtype):
    """The build of the warp-level kernel (one kernel over T) for this type that runtime/matmul's rule takes: of
    the largest tiles first (the most threads first among equal tiles), the first that makes at least 128
    blocks, else the one that makes the most. None where the build has none of this type."""
    builds = [b for b in kernels.kernels.get("hgemmMmaGuarded", ()) if b.type_args.get("T") == dtype]
    if not builds:
        return None
    blocks = lambda b: cdiv(m, b.constants["BM"]) * cdiv(n, b.constants["BN"])  # noqa: E731
    builds.sort(key=lambda b: (-b.constants["BM"] * b.constants["BN"], -b.block[0] * b.block[1] * b.block[2]))
    return next((b for b in builds if blocks(b) >= 128), max(builds, key=blocks))


def _matmul16_operands(torch, a, b):
    """(m, n, k, device index) of two operands that tskernel::matmul16 takes, checked without building device
    objects or messages (a few microseconds a call); anything else goes to _check_matmul16, which names the problem."""
    dtype = a.dtype
    if (dtype is torch.bfloat16 or dtype is torch.float16) and b.dtype is dtype and a.dim() == 2 and b.dim() == 2 and a.is_cuda and b.is_cuda:
        m, k = a.shape
        k_b, n = b.shape
        index = a.get_device()
        if k == k_b and b.get_device() == index and a.is_contiguous() and b.is_contiguous() and m < 2**31 and n < 2**31 and k < 2**31:
            return m, n, k, index
    _check_matmul16(torch, "tskernel::matmul16", a, b)
    m, k = a.shape
    return m, b.shape[1], k, a.get_device()


MATMUL16_PLANS = 4096  # shapes remembered per build of the prebuilt kernels (the dict is emptied when full)
# The warpgroup rungs' tiles (rows, columns of C), as matmul16.ts's grids and tensor maps have them.
WGMMA16_TILES = {"hgemm-wgmma-ws": (128, 256), "hgemm-wgmma-small": (64, 128)}


def _matmul16_plan(index, f16, m, n, k, aligned):
    """(kernel, grid, tensor-map boxes of A, B and C or None, element type name) of an m×n×k product on device
    `index`: the rung matmul16_rung picks and its launch, worked out once per shape and device."""
    kernels = prebuilt()
    arch = driver().device(index)[1]
    key = (index, arch, f16, m, n, k, aligned)
    plan = kernels.matmul16_plans.get(key)
    if plan is not None:
        return plan
    multiprocessors = _multiprocessors_of(index)
    name, kernel = matmul16_rung(kernels, arch, m, n, k, aligned, f16, multiprocessors)
    boxes = None
    tile = WGMMA16_TILES.get(name.removesuffix("-f16"))
    if tile is not None:
        # A in boxes of the tile's rows × 64, B and C of 64 × 64 (matmul16.ts's tensorMapA and tensorMapsBC); a
        # persistent grid of at most one block a multiprocessor.
        boxes = ((tile[0], 64), (64, 64), (64, 64))
        grid = (min(cdiv(m, tile[0]) * cdiv(n, tile[1]), multiprocessors), 1, 1)
    elif name.startswith("hgemm-mma-guarded"):
        grid = (cdiv(n, kernel.constants["BN"]), cdiv(m, kernel.constants["BM"]), 1)
    else:
        tile = kernel.constants.get("TILE", 16)
        grid = (cdiv(n, tile), cdiv(m, tile), 1)
    plan = (kernel, check_grid(kernel.name, grid), boxes, "f16" if f16 else "bf16")
    if len(kernels.matmul16_plans) >= MATMUL16_PLANS:
        kernels.matmul16_plans.clear()
    kernels.matmul16_plans[key] = plan
    return plan


def _matmul16(torch, a, b):
    """C = A·B in bf16 or f16 (f32 accumulation, C rounded once): the implementation of tskernel::matmul16."""
    m, n, k, index = _matmul16_operands(torch, a, b)
    if k == 0:
        return torch.zeros((m, n), dtype=a.dtype, device=a.device)
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    if m == 0 or n == 0:
        return c
    pa, pb, pc = a.data_ptr(), b.data_ptr(), c.data_ptr()
    kernel, grid, boxes, type_name = _matmul16_plan(index, a.dtype is torch.float16, m, n, k, (pa | pb | pc) % 16 == 0)
    stream = _stream_of(index)
    values = [m, n, k, 1.0, pa, pb, 0.0, pc]
    if boxes is not None:
        (ar, ac), (br, bc), (cr, cc) = boxes
        specs = ((pa, m, k, ar, ac, type_name), (pb, k, n, br, bc, type_name), (pc, m, n, cr, cc, type_name))
        _buffer, addresses = tensor_maps.addresses(torch, a.device, stream, specs)
        values += addresses
    kernel.launch_grid(index, grid, stream, values)
    return c


def _routed(torch, tensors, direct, eager, operator, *args):
    """A call of one of the operators above by the route a generated operator takes (route over `tensors`, its
    tensor arguments, named by the caller: finding them among `args` cost 4 µs a call on the H100 host): eagerly on plain tensors straight to its implementation `direct(torch, *args)` when no gradient is
    wanted, or through `eager`, an autograd function with the operator's gradients (None: the operator has none of
    its own), else through PyTorch's dispatcher, `operator(*args)` (torch.compile, modes, subclasses)."""
    way = route(*tensors)
    if way == LAUNCH:
        return direct(torch, *args)
    if way == AUTOGRAD and eager is not None:
        return eager(*args)
    return operator(*args)


def matmul(a, b):
    """C = A·B for row-major CUDA matrices (A m×k, B k×n), as the runtime's matmul() takes them.

    float32: tskernel's SGEMM kernels as the runtime's matmul() takes them for FP32 without stream-k: the
    operator of sgemmMultistage (examples/sgemm-multistage.ts) when n and k are multiples of 4, whose first
    specialization that takes the shape runs (128×128 tiles where they divide it, else 64×128, else the guarded
    build), else the operator of sgemmRegisterStaged, which takes any shape. Needs sgemm_multistage.py beside
    this file (`tskernel build examples/sgemm-multistage.ts --target torch --cubin`); traceable by
    torch.compile, since it is an allocation and a custom operator that writes it; no gradients.

    bfloat16 and float16: the operator tskernel::matmul16 (products accumulated in f32, C rounded to the input
    type once; eagerly on plain tensors its implementation is called directly, as a generated operator's is:
    _routed), with the 16-bit rungs of runtime/matmul (matmul16_rung: the wgmma kernel on an sm_90 GPU where n and k
    are multiples of 8, in small tiles for small products, else the warp-level kernel from sm_80, else the tiled kernel) from the prebuilt kernels
    (prebuilt_build_command()),
    with gradients (dA = dC·Bᵀ, dB = Aᵀ·dC through the same operator)."""
    global _sgemm
    import torch

    if a.dim() != 2 or b.dim() != 2:
        raise TskernelError(f"matmul: expects two matrices, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype == torch.bfloat16 or a.dtype == torch.float16:
        ops = builtin_ops(torch)
        return _routed(torch, (a, b), _matmul16, ops.matmul16_eager, ops.matmul16, a, b)
    if _sgemm is None:
        if __package__:
            from . import sgemm_multistage as module
        else:
            import sgemm_multistage as module
        _sgemm = module
    c = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    k, n = b.shape
    op = _sgemm.sgemm_multistage if n % 4 == 0 and k % 4 == 0 else _sgemm.sgemm_register_staged
    op(1.0, a, b, 0.0, c)
    return c


def _check_attention(torch, op, named):
    """The checks of attention's tensors ([B, H, S, D] contiguous bf16 on one GPU, all of q's shape; S a
    multiple of 128, D 64 or 128); returns (B, H, S, D)."""
    shape = None
    for name, t in named:
        if t.dim() != 4:
            raise TskernelError(f"{op}: parameter '{name}' must be [batch, heads, seq, headDim], got shape {tuple(t.shape)}")
        if t.dtype == torch.float16:
            raise TskernelError(f"{op}: parameter '{name}' is float16; the FlashAttention kernels (examples/flash-attention-fold.ts) take bfloat16 (convert with .to(torch.bfloat16))")
        if t.dtype != torch.bfloat16:
            raise TskernelError(f"{op}: parameter '{name}' expects a bfloat16 tensor, got {str(t.dtype)[6:]}")
        if shape is None:
            shape = tuple(t.shape)
        elif tuple(t.shape) != shape:
            raise TskernelError(f"{op}: parameter '{name}' has shape {tuple(t.shape)}, but 'q' has {shape} (self-attention: one shape for all)")
    _check_cuda_tensors(op, named)
    b, h, s, d = shape
    if d not in ATTENTION_HEAD_DIMS:
        raise TskernelError(f"{op}: the head dimension must be 64 or 128, got {d}")
    if s % ATTENTION_ROWS != 0 or s == 0:
        raise TskernelError(f"{op}: seq must be a positive multiple of {ATTENTION_ROWS}, got {s}")
    if b * h > GRID_LIMITS[1]:
        raise TskernelError(f"{op}: batch·heads = {b * h} exceeds the grid's {GRID_LIMITS[1]} (a block row per head)")
    if b * h * s * d >= 2**31:
        raise TskernelError(f"{op}: {b}·{h}·{s}·{d} elements do not fit the kernels' i32 indices")
    return b, h, s, d


def _attention_device(op, index):
    arch = driver().device(index)[1]
    if arch != "sm_90":
        raise TskernelError(f"{op}: the FlashAttention kernels need an sm_90 GPU (wgmma and the tensor memory accelerator, built for sm_90a); this one is {arch}")


def _attention_forward(torch, q, k, v, causal, scale):
    """(out, lse) of the FlashAttention forward (ATTENTION_FORWARD: examples/flash-attention-fold.ts): the implementation of tskernel::attention_forward. lse is f32
    [B, H, S], each query row's log-sum-exp in base 2 of the scaled scores (runtime/attention.ts's `lse`)."""
    op = "tskernel::attention"
    b, h, s, d = _check_attention(torch, op, (("q", q), ("k", k), ("v", v)))
    out = torch.empty_like(q)
    lse = torch.empty((b, h, s), dtype=torch.float32, device=q.device)
    rows = b * h * s
    if rows == 0:
        return out, lse
    index = q.get_device()
    _attention_device(op, index)
    kernel = _attention_forward_build(d)
    # Query rows a block: 64 a consumer warpgroup (Q's tensor map boxes are a block's rows).
    block_rows = 64 * _consumers(kernel)
    stream = _stream_of(index)
    maps = (tensor_map_of(q, rows, d, block_rows, 64), tensor_map_of(k, rows, d, 128, 64), tensor_map_of(v, rows, d, 128, 64), tensor_map_of(out, rows, d, 64, 64))
    _buffer, addresses = tensor_maps.addresses(torch, q.device, stream, maps)
    values = [q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), lse.data_ptr(), *addresses, s, float(scale), 1 if causal else 0]
    kernel.launch(index, (cdiv(s, block_rows), b * h, 1), stream, values)
    return out, lse


def _attention_forward_build(d):
    """The forward's build for head dim d with the most consumer warpgroups (runtime/attention.ts's rule: at D 64
    the three-consumer build, 98 % of cuDNN's forward on the H100 against 87 % for two)."""
    kernels = prebuilt()
    kernels.need(*ATTENTION_FORWARD, D=d)
    builds = [k for k in kernels.kernels.get(ATTENTION_FORWARD[0], ()) if k.constants.get("D") == d]
    return max(builds, key=_consumers)


def _consumers(kernel):
    """A forward build's consumer warpgroups, 64 query rows each (the kernel's default, 2, where not specialized)."""
    return kernel.constants.get("CONSUMERS", 2)


def _attention_backward(torch, q, k, v, out, lse, grad_out, causal, scale):
    """(dq, dk, dv) of examples/flash-attention-backward.ts: Dsum = rowsum(dO ∘ O), then dK and dV a block
    per 128 keys, then dQ a block per 128 queries (runtime/attention.ts's attentionBackward)."""
    op = "tskernel::attention_backward"
    b, h, s, d = _check_attention(torch, op, (("q", q), ("k", k), ("v", v), ("out", out), ("grad_out", grad_out)))
    if lse.dtype != torch.float32 or tuple(lse.shape) != (b, h, s):
        raise TskernelError(f"{op}: parameter 'lse' must be the forward's float32 [{b}, {h}, {s}], got {str(lse.dtype)[6:]} {tuple(lse.shape)}")
    _check_cuda_tensors(op, (("q", q), ("lse", lse)))
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    rows = b * h * s
    if rows == 0:
        return dq, dk, dv
    index = q.get_device()
    _attention_device(op, index)
    kernels = prebuilt()
    what = "examples/flash-attention-backward.ts"
    pre, kv, qk = (kernels.need(name, what, D=d) for name in ("flashAttentionBackwardPre", "flashAttentionBackwardKV", "flashAttentionBackwardQ"))
    dsum = torch.empty((b, h, s), dtype=torch.float32, device=q.device)
    stream = _stream_of(index)
    m = lambda t, box: tensor_map_of(t, rows, d, box, 64)  # noqa: E731
    # The dK/dV kernel streams 64-query tiles against a block of 128 keys; the dQ kernel the other way round.
    maps = (m(q, 64), m(k, 128), m(v, 128), m(grad_out, 64), m(dk, 64), m(dv, 64), m(q, 128), m(k, 64), m(v, 64), m(grad_out, 128), m(dq, 64))
    _buffer, addresses = tensor_maps.addresses(torch, q.device, stream, maps)
    tail = [s, float(scale), 1 if causal else 0]
    ptr = [t.data_ptr() for t in (q, k, v, grad_out, lse, dsum)]
    pre.launch(index, (cdiv(rows * d // 8, 128), 1, 1), stream, [out.data_ptr(), grad_out.data_ptr(), dsum.data_ptr(), rows])
    grid = (s // ATTENTION_ROWS, b * h, 1)
    kv.launch(index, grid, stream, ptr + [dk.data_ptr(), dv.data_ptr(), *addresses[:6]] + tail)
    qk.launch(index, grid, stream, ptr + [dq.data_ptr(), *addresses[6:]] + tail)
    return dq, dk, dv


def attention(q, k, v, causal=False, scale=None):
    """Scaled dot-product attention, softmax(scale·Q·Kᵀ (masked above the diagonal when causal))·V for each
    (batch, head), as runtime/attention.ts's attention(): q, k, v bf16 CUDA tensors [B, H, S, D], contiguous,
    of one shape, S a multiple of 128, D 64 or 128, on an sm_90 GPU; scale defaults to 1/sqrt(D). Returns the
    output [B, H, S, D]. The operator tskernel::attention_forward (the FlashAttention kernel with P in registers,
    examples/flash-attention-fold.ts), with gradients through tskernel::attention_backward
    (examples/flash-attention-backward.ts, from the forward's log-sum-exps). The prebuilt kernels:
    prebuilt_build_command()."""
    out, _lse = attention_forward(q, k, v, causal, scale)
    return out


def attention_forward(q, k, v, causal=False, scale=None):
    """(out, lse): attention's output and each query row's log-sum-exp (f32 [B, H, S], base 2 of the scaled
    scores: what attention_backward needs)."""
    import torch

    ops = builtin_ops(torch)
    if scale is None:
        scale = q.shape[-1] ** -0.5
    return _routed(torch, (q, k, v), _attention_forward, ops.attention_forward_eager, ops.attention_forward, q, k, v, bool(causal), float(scale))


def attention_backward(q, k, v, out, lse, grad_out, causal=False, scale=None):
    """(dq, dk, dv) of attention from its inputs, attention_forward's (out, lse) and the gradient of out, with
    the forward's causal and scale (runtime/attention.ts's attentionBackward)."""
    import torch

    ops = builtin_ops(torch)
    if scale is None:
        scale = q.shape[-1] ** -0.5
    return _routed(torch, (q, k, v, out, lse, grad_out), _attention_backward, None, ops.attention_backward, q, k, v, out, lse, grad_out, bool(causal), float(scale))


def contiguous(tensor):
    """A gradient as a backward kernel reads it: dense, in row-major order."""
    return tensor if tensor.is_contiguous() else tensor.contiguous()

