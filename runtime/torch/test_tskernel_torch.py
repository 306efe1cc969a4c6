"""Tests of tskernel_torch.py and of generated PyTorch modules that need neither a GPU nor PyTorch.

CI has no PyTorch recent enough for torch.library.custom_op (Debian's is 1.13), so a stand-in for the few parts
of torch that a generated module touches (dtypes, tensors with shapes and devices, empty/zeros, custom_op and
its register_fake/register_autograd) is installed as `torch` while a module is imported, and a stand-in for
the CUDA driver records each launch: function, grid, block, shared memory, stream, and every argument read
back from the packed parameter array. What these tests check is ours: argument checks and their messages,
size binding, the choice of specialization, output shapes and zeroing, the grid, the argument order and
values, the custom-op registration (names, mutated arguments) and the autograd pairing. The real thing
(PyTorch 2.11 on an H100) is examples/torch-app and bench/results/*-torch-ops-*.json.

    python3 -m unittest runtime/torch/test_tskernel_torch.py
    TSKERNEL_TORCH_MODULES=build/torch/kernels.py python3 -m unittest runtime/torch/test_tskernel_torch.py

The generated module of codegen-tests/torch-ops (its expected.py) is always tested; the examples' module
(examples/torch-app/kernels.ts) when TSKERNEL_TORCH_MODULES names it (tests/torch-module.test.ts does).
"""

import ctypes
import importlib.util
import itertools
import json
import os
import struct
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import tskernel_torch as rt  # noqa: E402


# ---- a stand-in for torch ---------------------------------------------------------------------------------


class DType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class Device:
    def __init__(self, spec):
        self.type, _, index = spec.partition(":")
        self.index = int(index) if index else (0 if self.type == "cuda" else None)

    def __eq__(self, other):
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


_addresses = itertools.count(0x7F0000000000, 0x100000)


class FakeTensor:
    def __init__(self, shape, dtype, device="cuda:0", contiguous=True, zeroed=False, requires_grad=False):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device if isinstance(device, Device) else Device(device)
        self._contiguous = contiguous
        self.zeroed = zeroed
        self.requires_grad = requires_grad
        self.address = next(_addresses)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def get_device(self):
        return self.device.index if self.is_cuda else -1

    def numel(self):
        n = 1
        for v in self.shape:
            n *= v
        return n

    def is_contiguous(self):
        return self._contiguous

    def contiguous(self):
        return self if self._contiguous else FakeTensor(self.shape, self.dtype, self.device)

    def data_ptr(self):
        return self.address

    def dim(self):
        return len(self.shape)

    def t(self):
        """A transposed view: the same address, not contiguous."""
        view = FakeTensor(self.shape[::-1], self.dtype, self.device, contiguous=False)
        view.address = self.address
        return view


class CustomOp:
    def __init__(self, name, fn, mutates_args):
        self.name, self.fn, self.mutates_args = name, fn, tuple(mutates_args)
        self.fake = None
        self.backward = self.setup_context = None

    def __call__(self, *args):
        return self.fn(*args)

    def register_fake(self, fn):
        self.fake = fn
        return fn

    def register_autograd(self, backward, setup_context=None):
        self.backward, self.setup_context = backward, setup_context


def fake_torch():
    torch = types.ModuleType("torch")
    torch.__version__ = "stand-in"
    for t in rt.TYPES.values():
        setattr(torch, t.torch_name, DType(t.torch_name))
    torch.int64 = DType("int64")
    torch.Tensor = FakeTensor
    torch.registered = {}

    def custom_op(name, mutates_args, schema=None):
        def wrap(fn):
            op = CustomOp(name, fn, mutates_args)
            op.schema = schema
            torch.registered[name] = op
            return op

        return wrap

    torch.library = types.SimpleNamespace(custom_op=custom_op, register_autograd=object())
    torch.empty = lambda shape, dtype, device: FakeTensor(shape, dtype, device)
    torch.zeros = lambda shape, dtype, device: FakeTensor(shape, dtype, device, zeroed=True)
    torch.empty_like = lambda t: FakeTensor(t.shape, t.dtype, t.device)
    torch.zeros_like = lambda t: FakeTensor(t.shape, t.dtype, t.device, zeroed=True)
    torch.mode = types.SimpleNamespace(compiling=False, dispatch=0, grad=True)
    torch.compiler = types.SimpleNamespace(is_compiling=lambda: torch.mode.compiling)
    torch.is_grad_enabled = lambda: torch.mode.grad
    torch.nn = types.SimpleNamespace(Parameter=type("Parameter", (FakeTensor,), {}))
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda index: 0x5000 + index, _len_torch_dispatch_stack=lambda: torch.mode.dispatch)
    torch.applied = []

    class Function:
        """torch.autograd.Function's apply: forward, then setup_context on a ctx kept for the test."""

        @classmethod
        def apply(cls, *args):
            output = cls.forward(*args)
            ctx = types.SimpleNamespace()
            ctx.save_for_backward = lambda *t: setattr(ctx, "saved_tensors", t)
            cls.setup_context(ctx, args, output)
            torch.applied.append((cls, ctx))
            return output

    torch.autograd = types.SimpleNamespace(Function=Function)
    return torch


class FakeDriver:
    """Records launches: loads nothing, the context is always current."""

    CONTEXT = 0xC0

    def __init__(self):
        self.launches = []
        self.loaded = []
        self.names = []  # CUfunction handles are 0x1000 + an index into this
        self.lib = types.SimpleNamespace(cuCtxPushCurrent_v2=None, cuCtxPopCurrent_v2=None)

    def load(self, index, images):
        self.loaded.append((index, images.choose("sm_90")))
        return self.CONTEXT, 0xAB

    def function(self, module, name, shared_bytes):
        self.names.append(name)
        return 0x1000 + len(self.names) - 1

    def get_current(self, pointer):
        ctypes.cast(pointer, ctypes.POINTER(ctypes.c_void_p))[0] = self.CONTEXT

    def check(self, call, code):
        if code != 0:
            raise rt.CudaError(call)

    def launch_kernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, array, extra):
        # The fast launcher passes the function and stream as c_void_p (to the entry point without argtypes).
        function, stream = (v.value if isinstance(v, ctypes.c_void_p) else v for v in (function, stream))
        function = self.names[function - 0x1000]
        # The 8 bytes at each argument's address as they are now (the pack is reused by the next launch).
        snapshot = [ctypes.string_at(array[i], 8) for i in range(len(array))]
        self.launches.append({"function": function, "grid": (gx, gy, gz), "block": (bx, by, bz), "shared": shared, "stream": stream, "array": snapshot})
        return 0

    launch_kernel_raw = launch_kernel


def import_generated(path, torch):
    """Imports a generated module with the stand-in torch; returns it."""
    saved = sys.modules.get("torch")
    sys.modules["torch"] = torch
    try:
        name = f"generated_{abs(hash(path))}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved


class Generated(unittest.TestCase):
    """Base: a generated module, the stand-ins, and helpers to read a launch's arguments."""

    path = None

    def setUp(self):
        self.torch = fake_torch()
        self.driver = FakeDriver()
        self.saved_driver, rt._driver = rt._driver, self.driver
        self.saved_torch = sys.modules.get("torch")
        sys.modules["torch"] = self.torch
        self.module = import_generated(self.path, self.torch)

    def tearDown(self):
        rt._driver = self.saved_driver
        if self.saved_torch is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = self.saved_torch

    def tensor(self, shape, type="float32", **kw):
        return FakeTensor(shape, getattr(self.torch, type), **kw)

    def arguments(self, launch, kernel):
        """The values the kernel received, read back from the packed array's targets as the driver read them."""
        return [t.from_buffer_copy(launch["array"][i][: ctypes.sizeof(t)]).value for i, t in enumerate(kernel._ctypes)]

    def only_launch(self):
        self.assertEqual(len(self.driver.launches), 1, self.driver.launches)
        return self.driver.launches[0]


# ---- the runtime's parts ----------------------------------------------------------------------------------


class Formulas(unittest.TestCase):
    def test_division_truncates_as_in_c(self):
        cases = [(7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1), (6, 3, 2, 0), (0, 5, 0, 0)]
        for a, b, q, r in cases:
            self.assertEqual((rt.div(a, b), rt.mod(a, b)), (q, r), (a, b))
            self.assertEqual(rt.div(a, b) * b + rt.mod(a, b), a)

    def test_cdiv_rounds_up(self):
        self.assertEqual([rt.cdiv(n, 256) for n in (0, 1, 255, 256, 257, 2**31 - 1)], [0, 1, 1, 1, 2, 2**23])


class ElementTypes(unittest.TestCase):
    def test_each_type_names_a_torch_dtype_and_a_ctype(self):
        self.assertEqual({k: v.torch_name for k, v in rt.TYPES.items()}["bf16"], "bfloat16")
        for t in rt.TYPES.values():
            self.assertIn(t.kind, ("float", "int", "bool"))
            self.assertTrue(issubclass(t.ctype, ctypes._SimpleCData))
            if t.kind == "int":
                self.assertEqual(t.high - t.low + 1, 2 ** (8 * ctypes.sizeof(t.ctype)), t.name)

    def test_half_precision_scalars_are_their_bits(self):
        f16, bf16 = rt.TYPES["f16"].convert, rt.TYPES["bf16"].convert
        self.assertEqual([f16(v) for v in (1.0, -2.0, 0.5, 65504.0)], [0x3C00, 0xC000, 0x3800, 0x7BFF])
        self.assertEqual([bf16(v) for v in (1.0, -2.0, 3.140625)], [0x3F80, 0xC000, 0x4049])
        # Ties go to the even neighbour; past the tie, up.
        self.assertEqual(bf16(1 + 2**-8), 0x3F80)
        self.assertEqual(bf16(1 + 3 * 2**-8), 0x3F82)
        self.assertEqual(bf16(1 + 2**-8 + 2**-12), 0x3F81)
        self.assertEqual(bf16(float("inf")), 0x7F80)
        self.assertEqual(bf16(float("nan")) & 0x7FC0, 0x7FC0)


class Shapes(unittest.TestCase):
    def setUp(self):
        self.x = rt.Tensor("input", "f32", ("...rows", "cols"))
        self.gamma = rt.Tensor("gamma", "f32", ("cols",))

    def bind(self, *pairs):
        sizes, rests, sources = {}, {}, {}
        for tensor, shape in pairs:
            rt.bind_shape("op", tensor, shape, sizes, rests, sources)
        return sizes, rests

    def test_rest_dims_multiply_into_one_size(self):
        sizes, rests = self.bind((self.x, (2, 3, 8)), (self.gamma, (8,)))
        self.assertEqual(sizes, {"rows": 6, "cols": 8})
        self.assertEqual(rests, {"rows": (2, 3)})
        out = rt.Tensor("out", "f32", ("...rows", "cols"), role="output")
        self.assertEqual(rt.output_shape(out, sizes, rests, {}), (2, 3, 8))
        sizes, rests = self.bind((self.x, (8,)))
        self.assertEqual((sizes, rests), ({"rows": 1, "cols": 8}, {"rows": ()}))
        self.assertEqual(rt.output_shape(out, sizes, rests, {}), (8,))

    def test_mismatches_name_the_parameters(self):
        with self.assertRaisesRegex(rt.TskernelError, r"^op: parameter 'gamma' gives size cols = 4 \(\[cols\], shape \(4,\)\), but 'input' gave cols = 8$"):
            self.bind((self.x, (2, 8)), (self.gamma, (4,)))
        with self.assertRaisesRegex(rt.TskernelError, r"^op: parameter 'gamma' must have 1 dimension \(\[cols\]\), got shape \(2, 8\)$"):
            self.bind((self.gamma, (2, 8)))
        with self.assertRaisesRegex(rt.TskernelError, r"^op: parameter 'input' must have 1 or more dimensions \(\[\.\.\.rows, cols\]\), got shape \(\)$"):
            self.bind((self.x, ()))
        fixed = rt.Tensor("w", "f32", (3, "k"))
        with self.assertRaisesRegex(rt.TskernelError, r"^op: parameter 'w' must have 3 on dimension 0 \(\[3, k\]\), got shape \(4, 2\)$"):
            self.bind((fixed, (4, 2)))
        other = rt.Tensor("grad", "f32", ("...rows", "cols"))
        with self.assertRaisesRegex(rt.TskernelError, r"leading dimensions \(6,\) for \.\.\.rows, but 'input' has \(2, 3\)"):
            self.bind((self.x, (2, 3, 8)), (other, (6, 8)))

    def test_constant_dims_come_from_the_specialization(self):
        counts = rt.Tensor("counts", "u32", ("BINS",), role="zeroed output")
        self.assertEqual(rt.output_shape(counts, {"n": 5}, {}, {"BINS": 16}), (16,))


class Scalars(unittest.TestCase):
    def test_checks(self):
        i32, u32, f32, flag = (rt.Scalar("k", t) for t in ("i32", "u32", "f32", "bool"))
        self.assertEqual(rt.check_scalar("op", i32, -5), -5)
        self.assertEqual(rt.check_scalar("op", f32, 3), 3)
        self.assertIs(rt.check_scalar("op", flag, True), True)
        for param, value, message in [
            (i32, 2**31, r"expects a i32 \(from -2147483648 to 2147483647\), got 2147483648"),
            (u32, -1, r"expects a u32 \(from 0 to 4294967295\), got -1"),
            (i32, 1.5, r"expects an integer \(i32\), got float 1.5"),
            (i32, True, r"expects an integer \(i32\), got bool True"),
            (f32, "2", r"expects a number \(f32\), got str '2'"),
            (flag, 1, r"expects a bool, got int 1"),
        ]:
            with self.assertRaisesRegex(rt.TskernelError, rf"^op: parameter 'k' {message}$"):
                rt.check_scalar("op", param, value)


class Choosing(unittest.TestCase):
    def test_first_specialization_that_accepts(self):
        small = rt.Specialization("small", {"T": 64}, (64, 1, 1), 0, lambda s: (1, 1, 1), [("cols <= 256", lambda s: s["cols"] <= 256)])
        large = rt.Specialization("large", {"T": 256}, (256, 1, 1), 0, lambda s: (1, 1, 1), [("cols <= 1024", lambda s: s["cols"] <= 1024)])
        self.assertIs(rt.choose("op", [small, large], {"cols": 256}), small)
        self.assertIs(rt.choose("op", [small, large], {"cols": 257}), large)
        with self.assertRaisesRegex(rt.TskernelError, r"^op: no specialization takes cols = 2000 \(not met: small: cols <= 256; large: cols <= 1024\)$"):
            rt.choose("op", [small, large], {"cols": 2000})

    def test_grid(self):
        self.assertEqual(rt.check_grid("op", (3, 1, 1)), (3, 1, 1))
        self.assertIsNone(rt.check_grid("op", (0, 1, 1)))
        with self.assertRaisesRegex(rt.TskernelError, r"grid y = 65536 exceeds CUDA's limit of 65535"):
            rt.check_grid("op", (1, 65536, 1))


class ImageChoice(unittest.TestCase):
    def test_cubin_for_the_arch_else_the_newest_ptx_not_newer(self):
        images = rt.Images("/k", cubins={"sm_90": "a.sm_90.cubin"}, ptx={"sm_80": "a.sm_80.ptx", "sm_90": "a.sm_90.ptx"})
        self.assertEqual(images.choose("sm_90"), ("/k/a.sm_90.cubin", "cubin"))
        self.assertEqual(images.choose("sm_100"), ("/k/a.sm_90.ptx", "ptx"))
        self.assertEqual(images.choose("sm_86"), ("/k/a.sm_80.ptx", "ptx"))
        with self.assertRaisesRegex(rt.TskernelError, r"no code for this sm_75 GPU: the build has cubin for sm_90, PTX for sm_80, PTX for sm_90"):
            images.choose("sm_75")


class Packing(unittest.TestCase):
    def test_the_array_points_at_each_value(self):
        pack = rt.ArgumentPack([ctypes.c_void_p, ctypes.c_int32, ctypes.c_float, ctypes.c_bool])
        pack.values[0].value, pack.values[1].value, pack.values[2].value, pack.values[3].value = 0xDEAD0000, -7, 0.25, True
        read = [t.from_address(pack.array[i]).value for i, t in enumerate([ctypes.c_void_p, ctypes.c_int32, ctypes.c_float, ctypes.c_bool])]
        self.assertEqual(read, [0xDEAD0000, -7, 0.25, True])


# ---- the generated module of codegen-tests/torch-ops ------------------------------------------------------


class TorchOpsModule(Generated):
    path = os.path.join(ROOT, "codegen-tests", "torch-ops", "expected.py")

    def test_registers_each_operator_with_its_mutated_arguments(self):
        registered = {name: op.mutates_args for name, op in self.torch.registered.items() if not name.startswith("tskernel::")}
        self.assertEqual(
            registered,
            {f"tskernel_torch_ops::{n}": m for n, m in [("scale", ()), ("scale_backward", ()), ("scale_half", ()), ("axpy", ("y",)), ("histogram", ()), ("row_sums", ()), ("tile", ()), ("shift", ()), ("shift_backward", ())]},
        )
        self.assertTrue(all(op.fake is not None for op in self.torch.registered.values()))
        self.assertEqual(self.module.__all__, ["scale", "scale_backward", "scale_half", "axpy", "histogram", "row_sums", "tile", "shift", "shift_backward"])

    def test_scale_launch(self):
        x = self.tensor((3, 50))
        out = self.module.scale(x, 2.5)
        self.assertEqual((out.shape, str(out.dtype), str(out.device), out.zeroed), ((3, 50), "torch.float32", "cuda:0", False))
        launch = self.only_launch()
        self.assertEqual((launch["function"], launch["grid"], launch["block"], launch["shared"], launch["stream"]), ("scale", (2, 1, 1), (128, 1, 1), 0, 0x5000))
        self.assertEqual(self.arguments(launch, self.module._kernel_scale), [out.address, x.address, 150, 2.5])
        self.assertEqual(self.driver.loaded, [(0, (os.path.join(os.path.dirname(self.path), "kernel.sm_90.cubin"), "cubin"))])

    def test_argument_checks(self):
        scale = self.module.scale
        for args, message in [
            ((self.tensor((4,), "int32"), 1.0), r"parameter 'input' expects a float32 tensor \(f32\), got int32"),
            ((self.tensor((4,), device="cpu"), 1.0), r"parameter 'input' must be on a CUDA device, got cpu"),
            ((self.tensor((4,), contiguous=False), 1.0), r"parameter 'input' must be contiguous \(call \.contiguous\(\) on it\)"),
            (([1.0, 2.0], 1.0), r"parameter 'input' expects a tensor, got list"),
            ((self.tensor((4,)), "x"), r"parameter 'factor' expects a number \(f32\), got str 'x'"),
        ]:
            with self.assertRaisesRegex(rt.TskernelError, rf"^tskernel_torch_ops::scale: {message}$"):
                scale(*args)
        # Python checks the count of an operator's arguments; the kernel object says which it expects.
        with self.assertRaisesRegex(rt.TskernelError, r"^tskernel_torch_ops::scale: expects 2 argument\(s\) \(input, factor\), got 1$"):
            self.module._kernel_scale.launch(self.tensor((4,)))
        self.assertEqual(self.driver.launches, [])

    def test_empty_tensors_launch_nothing(self):
        out = self.module.scale(self.tensor((0, 7)), 1.0)
        self.assertEqual(out.shape, (0, 7))
        self.assertEqual(self.driver.launches, [])

    def test_mutated_tensor_and_devices(self):
        y, x = self.tensor((100,), device="cuda:1"), self.tensor((100,), device="cuda:1")
        self.assertIsNone(self.module.axpy(y, x, 3.0))
        launch = self.only_launch()
        self.assertEqual((launch["grid"], launch["stream"]), ((2, 1, 1), 0x5001))
        self.assertEqual(self.arguments(launch, self.module._kernel_axpy), [y.address, x.address, 100, 3.0])
        with self.assertRaisesRegex(rt.TskernelError, r"parameter 'x' is on cuda:0, but 'y' is on cuda:1"):
            self.module.axpy(y, self.tensor((100,)), 1.0)

    def test_zeroed_output_and_constant_shape(self):
        values = self.tensor((1_000_000,), "uint32")
        counts = self.module.histogram(values)
        self.assertEqual((counts.shape, str(counts.dtype), counts.zeroed), ((16,), "torch.uint32", True))
        launch = self.only_launch()
        self.assertEqual((launch["function"], launch["grid"]), ("histogram_BINS_16", (1024, 1, 1)))
        self.assertEqual(self.arguments(launch, self.module._kernel_histogram), [counts.address, values.address, 1_000_000])

    def test_specialization_by_requirements_and_bool_arguments(self):
        small = self.module.row_sums(self.tensor((10, 64)), True)
        launch = self.driver.launches[-1]
        self.assertEqual((small.shape, launch["function"], launch["grid"], launch["block"]), ((10,), "rowSums_THREADS_32_ROWS_4", (3, 1, 1), (32, 4, 1)))
        self.assertEqual(self.arguments(launch, self.module._kernel_row_sums)[2:], [10, 64, True])
        self.module.row_sums(self.tensor((10, 65)), False)
        launch = self.driver.launches[-1]
        self.assertEqual((launch["function"], launch["grid"], launch["block"]), ("rowSums_THREADS_128_ROWS_1", (10, 1, 1), (128, 1, 1)))
        self.assertEqual(self.arguments(launch, self.module._kernel_row_sums)[2:], [10, 65, False])
        with self.assertRaisesRegex(rt.TskernelError, r"no specialization takes rows = 10, cols = 300 \(not met: rowSums_THREADS_32_ROWS_4: cols <= 2 \* THREADS; rowSums_THREADS_128_ROWS_1: cols <= 2 \* THREADS\)"):
            self.module.row_sums(self.tensor((10, 300)), False)
        with self.assertRaisesRegex(rt.TskernelError, r"parameter 'absolute' expects a bool, got int 1"):
            self.module.row_sums(self.tensor((10, 3)), 1)

    def test_size_given_as_an_argument(self):
        row = self.tensor((7,))
        out = self.module.tile(row, 3)
        self.assertEqual(out.shape, (3, 7))
        launch = self.only_launch()
        self.assertEqual((launch["grid"], self.arguments(launch, self.module._kernel_tile)), ((1, 1, 1), [out.address, row.address, 7, 3]))

    def test_the_fast_launcher_takes_over_after_the_first_launch_and_hands_back_what_it_does_not_expect(self):
        kernel = self.module._kernel_row_sums
        matrix = self.tensor((10, 64))
        self.assertIsNone(kernel._fast)
        first = self.module.row_sums(matrix, True)
        self.assertIsNotNone(kernel._fast)
        second = self.module.row_sums(matrix, True)
        a, b = self.driver.launches
        self.assertEqual({k: v for k, v in a.items() if k != "array"}, {k: v for k, v in b.items() if k != "array"})
        self.assertEqual(self.arguments(a, kernel)[1:], self.arguments(b, kernel)[1:])
        self.assertEqual([self.arguments(a, kernel)[0], self.arguments(b, kernel)[0]], [first.address, second.address])
        # Another specialization, and errors, through the fast launcher: the same results as the generic path.
        self.module.row_sums(self.tensor((7, 200)), False)
        self.assertEqual((self.driver.launches[-1]["function"], self.driver.launches[-1]["grid"]), ("rowSums_THREADS_128_ROWS_1", (7, 1, 1)))
        with self.assertRaisesRegex(rt.TskernelError, r"parameter 'matrix' expects a float32 tensor \(f32\), got int32"):
            self.module.row_sums(self.tensor((10, 64), "int32"), True)
        with self.assertRaisesRegex(rt.TskernelError, r"no specialization takes rows = 10, cols = 300"):
            self.module.row_sums(self.tensor((10, 300)), True)
        # A device not loaded yet goes through the generic path once, which loads it.
        self.module.row_sums(self.tensor((3, 8), device="cuda:1"), True)
        self.assertEqual(self.driver.launches[-1]["stream"], 0x5001)
        self.assertEqual([index for index, _ in self.driver.loaded], [0, 0, 1])  # (each specialization asks for its module; the real driver loads it once per device)
        # Flattened shapes, the rest compared between inputs, outputs like an input.
        x = self.tensor((2, 3, 5))
        self.module.scale(x, 1.0)
        out = self.module.scale(x, 2.0)
        self.assertEqual((out.shape, self.driver.launches[-1]["grid"]), ((2, 3, 5), (1, 1, 1)))
        self.assertEqual(self.arguments(self.driver.launches[-1], self.module._kernel_scale), [out.address, x.address, 30, 2.0])
        self.assertIn("empty_like(a0)", self.module._kernel_scale._fast.source)
        counts = self.module.histogram(self.tensor((10,), "uint32"))
        counts = self.module.histogram(self.tensor((10,), "uint32"))
        self.assertEqual((counts.shape, counts.zeroed), ((16,), True))

    def test_bf16_tensors_go_as_addresses_and_a_bf16_scalar_as_its_bits_on_both_paths(self):
        kernel = self.module._kernel_scale_half
        x = self.tensor((3, 5), "bfloat16")
        first = self.module.scale_half(x, 1.5)
        self.assertIsNotNone(kernel._fast)
        second = self.module.scale_half(x, 1.5)
        a, b = self.driver.launches
        self.assertEqual(self.arguments(a, kernel), [first.address, x.address, 15, 0x3FC0])
        self.assertEqual(self.arguments(b, kernel), [second.address, x.address, 15, 0x3FC0])

    def test_routes(self):
        x = self.tensor((4,))
        self.module.scale(x, 1.0)
        self.assertEqual(self.torch.applied, [])
        # A gradient wanted: the autograd function, whose ctx then has what the backward kernel reads.
        y = self.module.scale(self.tensor((4,), requires_grad=True), 3.0)
        (function, ctx), = self.torch.applied
        self.assertEqual(ctx.scalars, {"factor": 3.0})
        (grad_input, none) = function.backward(ctx, self.tensor((4,)))
        self.assertIsNone(none)
        self.assertEqual((self.driver.launches[-1]["function"], grad_input.shape, y.shape), ("scaleBackward", (4,), (4,)))
        # Without grad mode, or for a kernel without gradients, no autograd function.
        self.torch.mode.grad = False
        self.module.scale(self.tensor((4,), requires_grad=True), 3.0)
        self.assertEqual(len(self.torch.applied), 1)
        # Under torch.compile, in a dispatch mode, or for a tensor subclass: the custom op.
        calls = []
        op = self.torch.registered["tskernel_torch_ops::scale"]
        op.fn = lambda *args: calls.append(args)
        self.torch.mode.compiling = True
        self.module.scale(x, 1.0)
        self.torch.mode.compiling, self.torch.mode.dispatch = False, 1
        self.module.scale(x, 2.0)
        self.torch.mode.dispatch = 0
        subclass = type("Sub", (FakeTensor,), {})((4,), self.torch.float32)
        self.module.scale(subclass, 3.0)
        self.assertEqual([c[1] for c in calls], [1.0, 2.0, 3.0])

    def test_fake_gives_shapes_without_launching(self):
        op = self.torch.registered["tskernel_torch_ops::tile"]
        out = op.fake(self.tensor((5,)), 4)
        self.assertEqual(out.shape, (4, 5))
        self.assertEqual(self.driver.launches, [])

    def test_autograd_pairs_scale_with_scale_backward(self):
        op = self.torch.registered["tskernel_torch_ops::scale"]
        ctx = types.SimpleNamespace(save_for_backward=lambda *t: setattr(ctx, "saved_tensors", t))
        x = self.tensor((2, 5))
        out = op(x, -1.5)
        op.setup_context(ctx, (x, -1.5), out)
        self.assertEqual((ctx.saved_tensors, ctx.scalars), ((), {"factor": -1.5}))
        grad = self.tensor((2, 5), contiguous=False)
        grads = op.backward(ctx, grad)
        self.assertEqual(len(grads), 2)
        self.assertIsNone(grads[1])
        launch = self.driver.launches[-1]
        self.assertEqual(launch["function"], "scaleBackward")
        # The gradient was made contiguous (a new tensor) before the kernel read it.
        arguments = self.arguments(launch, self.module._kernel_scale_backward)
        self.assertEqual(arguments[0], grads[0].address)
        self.assertNotEqual(arguments[1], grad.address)
        self.assertEqual(arguments[2:], [10, -1.5])

    def test_one_operator_dispatches_on_dtype_to_the_build_of_those_types_on_both_paths(self):
        dispatch = self.module._kernel_shift
        f32, bf16 = dispatch.kernels
        for kernel, dtype, function in [(f32, "float32", "shift_T_f32"), (bf16, "bfloat16", "shift_T_bf16")]:
            for call in range(2):  # the first launch takes the checked path, the second the build's fast launcher
                x = self.tensor((70,), dtype)
                out = self.module.shift(x, 0.25)
                self.assertEqual((out.shape, str(out.dtype)), ((70,), f"torch.{dtype}"))
                launch = self.driver.launches[-1]
                self.assertEqual((launch["function"], launch["grid"]), (function, (2, 1, 1)))
                self.assertEqual(self.arguments(launch, kernel), [out.address, x.address, 70, 0.25])
            self.assertIsNotNone(kernel._fast)
        self.assertEqual(len(self.driver.launches), 4)

    def test_a_dtype_no_build_takes_is_an_error_naming_what_each_takes(self):
        message = r"tskernel_torch_ops::shift: no specialization takes these dtypes \(input float16\); they take: shift_T_f32: input float32; shift_T_bf16: input bfloat16"
        with self.assertRaisesRegex(rt.TskernelError, message):
            self.module.shift(self.tensor((8,), "float16"), 1.0)
        with self.assertRaisesRegex(rt.TskernelError, message):
            self.torch.registered["tskernel_torch_ops::shift"].fake(self.tensor((8,), "float16"), 1.0)
        # What the dtypes do not decide is the chosen build's to report, as for one type.
        with self.assertRaisesRegex(rt.TskernelError, r"parameter 'input' expects a tensor, got float"):
            self.module.shift(1.0, 1.0)
        with self.assertRaisesRegex(rt.TskernelError, r"parameter 'by' expects a number \(f32\), got str"):
            self.module.shift(self.tensor((8,), "bfloat16"), "x")
        self.assertEqual(self.driver.launches, [])

    def test_fake_of_a_dispatching_operator_gives_the_chosen_builds_types(self):
        fake = self.torch.registered["tskernel_torch_ops::shift"].fake
        for dtype in ("float32", "bfloat16"):
            out = fake(self.tensor((3,), dtype), 2.0)
            self.assertEqual((out.shape, str(out.dtype)), ((3,), f"torch.{dtype}"))
        self.assertEqual(self.driver.launches, [])

    def test_the_backward_build_is_the_one_of_the_forwards_types(self):
        # shiftBackward's builds are bf16 then f32: the gradient's dtype, the forward output's, chooses.
        op = self.torch.registered["tskernel_torch_ops::shift"]
        for dtype, function in [("bfloat16", "shiftBackward_T_bf16"), ("float32", "shiftBackward_T_f32")]:
            ctx = types.SimpleNamespace(save_for_backward=lambda *t: setattr(ctx, "saved_tensors", t))
            x = self.tensor((5,), dtype)
            out = op(x, 1.0)
            op.setup_context(ctx, (x, 1.0), out)
            grad_input, none = op.backward(ctx, self.tensor((5,), dtype))
            self.assertIsNone(none)
            self.assertEqual((self.driver.launches[-1]["function"], str(grad_input.dtype)), (function, f"torch.{dtype}"))
        # The eager route's autograd function pairs them the same way.
        y = self.module.shift(self.tensor((5,), "bfloat16", requires_grad=True), 1.0)
        (function, ctx), = self.torch.applied
        (grad_input, _) = function.backward(ctx, self.tensor((5,), "bfloat16"))
        self.assertEqual((str(y.dtype), self.driver.launches[-1]["function"], str(grad_input.dtype)), ("torch.bfloat16", "shiftBackward_T_bf16", "torch.bfloat16"))


# ---- the examples' module, when a test generated it ----------------------------------------------------------

EXTRA = [p for p in os.environ.get("TSKERNEL_TORCH_MODULES", "").split(os.pathsep) if p]
APP = next((p for p in EXTRA if os.path.basename(p) == "kernels.py"), None)


@unittest.skipIf(APP is None, "TSKERNEL_TORCH_MODULES does not name the examples' kernels.py (tests/torch-module.test.ts sets it)")
class TorchAppModule(Generated):
    path = APP

    def test_layer_norm_picks_the_smallest_specialization_that_holds_a_row(self):
        for cols, function, block in [(64, "layerNorm_THREADS_64_ITEMS_1", 64), (256, "layerNorm_THREADS_64_ITEMS_1", 64), (260, "layerNorm_THREADS_128_ITEMS_2", 128), (4096, "layerNorm_THREADS_256_ITEMS_4", 256)]:
            x, gamma, beta = self.tensor((2, 3, cols)), self.tensor((cols,)), self.tensor((cols,))
            out = self.module.layer_norm(x, gamma, beta, 1e-5)
            launch = self.driver.launches[-1]
            self.assertEqual((out.shape, launch["function"], launch["grid"], launch["block"]), ((2, 3, cols), function, (6, 1, 1), (block, 1, 1)))
            self.assertEqual(self.arguments(launch, self.module._kernel_layer_norm)[:6], [out.address, x.address, gamma.address, beta.address, 6, cols])
            self.assertAlmostEqual(self.arguments(launch, self.module._kernel_layer_norm)[6], 1e-5, delta=1e-12)
        with self.assertRaisesRegex(rt.TskernelError, r"cols % 4 == 0"):
            self.module.layer_norm(self.tensor((2, 6)), self.tensor((6,)), self.tensor((6,)), 1e-5)
        with self.assertRaisesRegex(rt.TskernelError, r"parameter 'beta' gives size cols = 32"):
            self.module.layer_norm(self.tensor((2, 64)), self.tensor((64,)), self.tensor((32,)), 1e-5)

    def test_layer_norm_gradients(self):
        op = self.torch.registered["tskernel_kernels::layer_norm"]
        ctx = types.SimpleNamespace(save_for_backward=lambda *t: setattr(ctx, "saved_tensors", t))
        x, gamma, beta = self.tensor((40, 128)), self.tensor((128,)), self.tensor((128,))
        out = op(x, gamma, beta, 1e-5)
        op.setup_context(ctx, (x, gamma, beta, 1e-5), out)
        grad = self.tensor((40, 128))
        grads = op.backward(ctx, grad)
        self.assertEqual(len(grads), 4)
        self.assertIsNone(grads[3])
        self.assertEqual([g.shape for g in grads[:3]], [(40, 128), (128,), (128,)])
        self.assertEqual([g.zeroed for g in grads[:3]], [False, True, True])
        launch = self.driver.launches[-1]
        self.assertEqual((launch["function"], launch["grid"]), ("layerNormBackward_THREADS_64_ITEMS_1_ROWS_PER_BLOCK_16", (3, 1, 1)))
        self.assertEqual(self.arguments(launch, self.module._kernel_layer_norm_backward)[:8], [g.address for g in grads[:3]] + [x.address, gamma.address, grad.address, 40, 128])

    def test_gelu_gradients(self):
        op = self.torch.registered["tskernel_kernels::gelu"]
        ctx = types.SimpleNamespace(save_for_backward=lambda *t: setattr(ctx, "saved_tensors", t))
        x = self.tensor((1000,))
        out = op(x)
        op.setup_context(ctx, (x,), out)
        (grad_x,) = op.backward(ctx, self.tensor((1000,)))
        launch = self.driver.launches[-1]
        self.assertEqual((launch["function"], launch["grid"], grad_x.shape), ("geluBackward_T_f32", (4, 1, 1), (1000,)))
        # gelu is built for f32 and bf16: bf16 tensors take the bf16 builds, forward and backward.
        x = self.tensor((1000,), "bfloat16")
        out = op(x)
        op.setup_context(ctx, (x,), out)
        (grad_x,) = op.backward(ctx, self.tensor((1000,), "bfloat16"))
        self.assertEqual([l["function"] for l in self.driver.launches[-2:]], ["gelu_T_bf16", "geluBackward_T_bf16"])
        self.assertEqual((str(out.dtype), str(grad_x.dtype)), ("torch.bfloat16", "torch.bfloat16"))


# ---- the prebuilt kernels: tensor maps, matmul in bf16 and f16, attention ----------------------------------


def _fixture_manifest():
    """The manifest entries of the prebuilt kernels as a `--target torch --cubin --arch sm_90` build writes them
    (their parameters as the kernel files declare them), for when TSKERNEL_TORCH_PREBUILT names no real build."""
    b = lambda name, t: {"name": name, "kind": "buffer", "elementType": t, "access": "read"}  # noqa: E731
    s = lambda name, t: {"name": name, "kind": "scalar", "type": t}  # noqa: E731
    c = lambda name: {"name": name, "kind": "const", "type": "i32"}  # noqa: E731
    maps = lambda *names: [b(n, "u32") for n in names]  # noqa: E731
    gemm = lambda t: [s("M", "i32"), s("N", "i32"), s("K", "i32"), s("alpha", "f32"), b("A", t), b("B", t), s("beta", "f32"), b("C", t)]  # noqa: E731
    kernels = []

    def entry(name, file, constants, block, shared, params):
        function = name + "".join(f"_{k}_{v}" for k, v in constants.items())
        stem = file[:-3]
        kernels.append({"name": name, "specialization": constants, "block": block, "params": params,
                        "outputs": {"cuda": {"file": f"{stem}.cu", "function": function, "dynamicSharedBytes": shared, "cubin": {"file": f"{stem}.sm_90.cubin", "arch": "sm_90"}}}})

    for name, t in (("hgemmWgmmaWs", "bf16"), ("hgemmWgmmaWsF16", "f16")):
        entry(name, "hgemm-wgmma-ws.ts", {"STAGES": 3, "GROUP": 8}, [384, 1, 1], 214096, gemm(t) + maps("mapA", "mapB", "mapC") + [c("STAGES"), c("GROUP")])
    for t in ("bf16", "f16"):
        entry("hgemmWgmmaSmall", "hgemm-wgmma-small.ts", {"T": t, "STAGES": 7, "GROUP": 8}, [256, 1, 1], 189568, [dict(p, elementType=t) if p["kind"] == "buffer" else p for p in gemm(t)] + maps("mapA", "mapB", "mapC") + [c("STAGES"), c("GROUP")])
    for t in ("bf16", "f16"):
        consts = [c("BM"), c("BN"), c("BK"), c("WM"), c("WN"), c("THREADS"), c("STAGES"), c("GROUP")]
        for bm, bn, bk, wm, wn, threads, stages, shared in ((128, 256, 32, 64, 64, 256, 3, 81408), (64, 128, 32, 32, 32, 256, 3, 0), (64, 64, 32, 32, 32, 128, 3, 0), (32, 32, 16, 16, 16, 128, 2, 0)):
            constants = {"T": t, "BM": bm, "BN": bn, "BK": bk, "WM": wm, "WN": wn, "THREADS": threads, "STAGES": stages, "GROUP": 8}
            entry("hgemmMmaGuarded", "hgemm-mma-guarded.ts", constants, [threads, 1, 1], shared, [dict(p, elementType=t) if p["kind"] == "buffer" else p for p in gemm(t)] + consts)
    for name, t in (("hgemmTiledBf16", "bf16"), ("hgemmTiledF16", "f16")):
        entry(name, "hgemm-tiled.ts", {"TILE": 16}, [16, 16, 1], 0, gemm(t) + [c("TILE")])
    tail = [s("seq", "i32"), s("scale", "f32"), s("causal", "i32"), c("D"), c("STAGES")]
    qkv = [b("Q", "bf16"), b("K", "bf16"), b("V", "bf16")]
    fold_tail = tail + [c("CONSUMERS"), c("THREADS")]
    for d, stages, consumers, shared in ((128, 2, 2, 197688), (64, 4, 2, 164952), (64, 4, 3, 181344)):
        threads = 128 * (consumers + 1)
        entry("flashAttentionFold", "flash-attention-fold.ts", {"D": d, "STAGES": stages, "CONSUMERS": consumers, "THREADS": threads}, [threads, 1, 1], shared, qkv + [b("O", "bf16"), b("L", "f32")] + maps("mapQ", "mapK", "mapV", "mapO") + fold_tail)
    for d in (128, 64):
        entry("flashAttentionBackwardPre", "flash-attention-backward.ts", {"D": d}, [128, 1, 1], 0, [b("O", "bf16"), b("dO", "bf16"), b("Dsum", "f32"), s("rows", "i32"), c("D")])
        entry("flashAttentionBackwardKV", "flash-attention-backward.ts", {"D": d, "STAGES": 2}, [384, 1, 1], 100000 + d,
              qkv + [b("dO", "bf16"), b("L", "f32"), b("Dsum", "f32"), b("dK", "bf16"), b("dV", "bf16")] + maps("mapQ", "mapK", "mapV", "mapDO", "mapDK", "mapDV") + tail)
        entry("flashAttentionBackwardQ", "flash-attention-backward.ts", {"D": d, "STAGES": 2}, [384, 1, 1], 90000 + d,
              qkv + [b("dO", "bf16"), b("L", "f32"), b("Dsum", "f32"), b("dQ", "bf16")] + maps("mapQ", "mapK", "mapV", "mapDO", "mapDQ") + tail)
    return {"version": 1, "kernels": kernels}


class PrebuiltDriver(FakeDriver):
    """The stand-in driver, with a GPU of an architecture, multiprocessors and tensor maps whose 128 bytes spell
    what they were made of."""

    def __init__(self, arch="sm_90"):
        super().__init__()
        self.arch = arch
        self.encoded = 0

    def device(self, index):
        return self.CONTEXT, self.arch, {}

    def multiprocessors(self, index):
        return 132

    def encode_tensor_map(self, address, rows, cols, box_rows, box_cols, type_name):
        self.encoded += 1
        return struct.pack("<QQQQQ8s", address, rows, cols, box_rows, box_cols, type_name.encode()).ljust(128, b"\0")


def decode_map(image):
    address, rows, cols, box_rows, box_cols, name = struct.unpack("<QQQQQ8s", image[:48])
    return address, rows, cols, box_rows, box_cols, name.rstrip(b"\0").decode()


class PrebuiltOps(unittest.TestCase):
    """tskernel_torch's matmul (bf16, f16) and attention, launched from a build's manifest."""

    def setUp(self):
        import tempfile

        self.torch = fake_torch()
        self.uploads = []
        torch = self.torch

        def frombuffer(data, dtype):
            t = FakeTensor((len(data),), dtype, device="cpu")
            t.content = bytes(data)
            t.pin_memory = lambda: (setattr(t, "pinned", True), t)[1]
            t.to = lambda device, non_blocking=False: self._upload(t, device, non_blocking)
            return t

        torch.frombuffer = frombuffer
        torch.cuda = types.SimpleNamespace(is_available=lambda: True)
        self.driver = PrebuiltDriver()
        self.saved_driver, rt._driver = rt._driver, self.driver
        self.saved_torch = sys.modules.get("torch")
        sys.modules["torch"] = torch
        self.saved_env = os.environ.get("TSKERNEL_TORCH_KERNELS")
        real = os.environ.get("TSKERNEL_TORCH_PREBUILT")
        if real:
            self.directory = os.path.dirname(os.path.abspath(real))
        else:
            self.temporary = tempfile.TemporaryDirectory()
            self.directory = self.temporary.name
            with open(os.path.join(self.directory, "manifest.json"), "w") as f:
                json.dump(_fixture_manifest(), f)
        os.environ["TSKERNEL_TORCH_KERNELS"] = self.directory
        rt._prebuilt = None
        rt._builtin = None
        rt._multiprocessors.clear()
        rt.tensor_maps.clear()
        rt.require_custom_ops(torch)

    def tearDown(self):
        rt._driver = self.saved_driver
        rt._prebuilt = None
        rt._builtin = None
        rt._multiprocessors.clear()
        rt.tensor_maps.clear()
        if self.saved_env is None:
            os.environ.pop("TSKERNEL_TORCH_KERNELS", None)
        else:
            os.environ["TSKERNEL_TORCH_KERNELS"] = self.saved_env
        if self.saved_torch is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = self.saved_torch
        if hasattr(self, "temporary"):
            self.temporary.cleanup()

    def _upload(self, host, device, non_blocking):
        t = FakeTensor(host.shape, host.dtype, device)
        t.content = host.content
        self.uploads.append({"pinned": getattr(host, "pinned", False), "non_blocking": non_blocking, "device": str(device), "tensor": t})
        return t

    def tensor(self, shape, type="bfloat16", **kw):
        return FakeTensor(shape, getattr(self.torch, type), **kw)

    def arguments(self, launch):
        """A prebuilt launch's argument values, read back with its kernel's parameter types."""
        kernel = next(k for ks in rt.prebuilt().kernels.values() for k in ks if k.function == launch["function"])
        types_ = [ctypes.c_void_p if t is None else t.ctype for t in kernel.types]
        return [t.from_buffer_copy(launch["array"][i][: ctypes.sizeof(t)]).value for i, t in enumerate(types_)]

    def maps_at(self, addresses):
        """The specs of the tensor maps at these device addresses (in the uploaded buffers)."""
        found = []
        for address in addresses:
            for upload in self.uploads:
                base = upload["tensor"].address
                if base <= address < base + len(upload["tensor"].content):
                    offset = address - base
                    self.assertEqual(offset % 128, 0)
                    found.append(decode_map(upload["tensor"].content[offset : offset + 128]))
                    break
            else:
                self.fail(f"no tensor map uploaded at {address:#x}")
        return found

    def test_tensor_map_rules(self):
        self.assertIsNone(rt.tensor_map_problem(0x1000, 4096, 128, 128, 64, "bf16"))
        for args, message in [
            ((0x1000, 64, 64, 64, 64, "i32"), "f32, f16 or bf16"),
            ((0x1000, 64, 64, 64, 128, "bf16"), "one 128-byte swizzle row"),
            ((0x1000, 64, 64, 64, 64, "f32"), "one 128-byte swizzle row"),
            ((0x1000, 64, 64, 512, 32, "f32"), "at most 256 rows"),
            ((0x1000, 64, 12, 64, 8, "bf16"), "not a multiple of 16 bytes"),
            ((0x1008, 64, 64, 64, 64, "bf16"), "not 16-byte aligned"),
            ((0x1000, 0, 64, 64, 64, "bf16"), "positive integers"),
        ]:
            self.assertIn(message, rt.tensor_map_problem(*args), args)

    def test_tensor_maps_are_cached_by_what_their_bytes_depend_on(self):
        maps = rt.TensorMaps(limit=2)
        device = Device("cuda:0")
        a = (0x10000, 256, 64, 128, 64, "bf16")
        b = (0x20000, 256, 64, 64, 64, "bf16")
        buffer, (pa, pb) = maps.addresses(self.torch, device, 7, (a, b))
        self.assertEqual((pb - pa, self.maps_at((pa, pb))), (128, [a, b]))
        self.assertEqual(self.uploads[-1]["pinned"] and self.uploads[-1]["non_blocking"], True)
        self.assertIs(maps.addresses(self.torch, device, 7, (a, b))[0], buffer)  # a hit: nothing encoded again
        self.assertEqual((maps.made, self.driver.encoded), (1, 2))
        self.assertIsNot(maps.addresses(self.torch, device, 8, (a, b))[0], buffer)  # another stream
        maps.addresses(self.torch, device, 7, (b,))  # a third entry evicts the oldest (stream 7's (a, b))
        self.assertIsNot(maps.addresses(self.torch, device, 7, (a, b))[0], buffer)
        self.assertEqual(maps.made, 4)
        per_call = rt.TensorMaps(limit=0)
        per_call.addresses(self.torch, device, 7, (a,))
        per_call.addresses(self.torch, device, 7, (a,))
        self.assertEqual((per_call.made, len(per_call.cached)), (2, 0))
        with self.assertRaisesRegex(rt.TskernelError, "not 16-byte aligned"):
            maps.addresses(self.torch, device, 7, ((0x10008, 256, 64, 128, 64, "bf16"),))

    def test_matmul_bf16_on_the_wgmma_rung_where_its_tiles_divide_the_shape(self):
        a, b = self.tensor((4096, 1024)), self.tensor((1024, 1024))
        c = rt.matmul(a, b)
        self.assertEqual((c.shape, str(c.dtype)), ((4096, 1024), "torch.bfloat16"))
        launch = self.driver.launches[-1]
        self.assertEqual((launch["function"], launch["grid"], launch["block"], launch["shared"], launch["stream"]), (rt.prebuilt().find("hgemmWgmmaWs").function, (128, 1, 1), (384, 1, 1), 214096, 0x5000))
        args = self.arguments(launch)
        self.assertEqual(args[:8], [4096, 1024, 1024, 1.0, a.address, b.address, 0.0, c.address])
        self.assertEqual(self.maps_at(args[8:]), [(a.address, 4096, 1024, 128, 64, "bf16"), (b.address, 1024, 1024, 64, 64, "bf16"), (c.address, 4096, 1024, 64, 64, "bf16")])
        # The grid: min(tiles, multiprocessors).
        rt.matmul(self.tensor((4096, 64)), self.tensor((64, 4096)))
        self.assertEqual(self.driver.launches[-1]["grid"], (132, 1, 1))
        self.assertEqual(rt.matmul16_rung(rt.prebuilt(), "sm_90", 4096, 4096, 4096, True, False, 132)[0], "hgemm-wgmma-ws")
        # Partial tiles at the edges: 2000×2000 is 16 × 8 tiles of 128 × 256.
        a, b = self.tensor((2000, 1000), "float16"), self.tensor((1000, 2000), "float16")
        c = rt.matmul(a, b)
        launch = self.driver.launches[-1]
        self.assertEqual((launch["function"], launch["grid"]), (rt.prebuilt().find("hgemmWgmmaWsF16").function, (128, 1, 1)))
        self.assertEqual(self.maps_at(self.arguments(launch)[8:]), [(a.address, 2000, 1000, 128, 64, "f16"), (b.address, 1000, 2000, 64, 64, "f16"), (c.address, 2000, 2000, 64, 64, "f16")])

    def test_matmul_in_small_tiles_where_the_large_ones_leave_a_quarter_of_the_multiprocessors_idle(self):
        # 1000³: 8 × 4 = 32 tiles of 128 × 256 (fewer than 3/4 of 132), 16 × 8 = 128 of 64 × 128, partial at the edges.
        a, b = self.tensor((1000, 1000), "float16"), self.tensor((1000, 1000), "float16")
        c = rt.matmul(a, b)
        launch = self.driver.launches[-1]
        small = rt.prebuilt().find("hgemmWgmmaSmall", T="f16")
        self.assertEqual((launch["function"], launch["grid"], launch["block"], launch["shared"]), (small.function, (128, 1, 1), (256, 1, 1), 189568))
        args = self.arguments(launch)
        self.assertEqual(args[:8], [1000, 1000, 1000, 1.0, a.address, b.address, 0.0, c.address])
        self.assertEqual(self.maps_at(args[8:]), [(a.address, 1000, 1000, 64, 64, "f16"), (b.address, 1000, 1000, 64, 64, "f16"), (c.address, 1000, 1000, 64, 64, "f16")])
        # The boundary: 98 large tiles take the small ones, 99 (three quarters of 132) the large; small grids are min(tiles, 132).
        self.assertEqual(rt.matmul16_rung(rt.prebuilt(), "sm_90", 14 * 128, 7 * 256, 64, True, False, 132)[0], "hgemm-wgmma-small")
        self.assertEqual(rt.matmul16_rung(rt.prebuilt(), "sm_90", 99 * 128, 256, 64, True, False, 132)[0], "hgemm-wgmma-ws")
        rt.matmul(self.tensor((14 * 128, 64)), self.tensor((64, 7 * 256)))
        self.assertEqual((self.driver.launches[-1]["function"], self.driver.launches[-1]["grid"]), (rt.prebuilt().find("hgemmWgmmaSmall", T="bf16").function, (132, 1, 1)))
        # Without the multiprocessors (or without the kernel in the build) the large tiles, as before.
        self.assertEqual(rt.matmul16_rung(rt.prebuilt(), "sm_90", 1000, 1000, 1000, True, True)[0], "hgemm-wgmma-ws-f16")

    def test_matmul_elsewhere_on_the_warp_level_rung_from_sm_80(self):
        mma = lambda t, bm, bn: rt.prebuilt().find("hgemmMmaGuarded", T=t, BM=bm, BN=bn)  # noqa: E731
        for (m, n, k), arch, dtype, (bm, bn) in [
            ((1000, 1020, 1001), "sm_90", "float16", (64, 128)),  # k not a multiple of 8: 64×128 tiles make 16 × 8 blocks
            ((4096, 4096, 4096), "sm_80", "bfloat16", (128, 256)),
            ((4096, 4092, 4000), "sm_90", "bfloat16", (128, 256)),  # n not a multiple of 8
            ((1023, 1021, 1019), "sm_89", "float16", (64, 128)),
            ((100, 200, 64), "sm_86", "bfloat16", (32, 32)),  # nothing makes 128 blocks: the most blocks
        ]:
            self.driver.arch = arch
            a, b = self.tensor((m, k), dtype), self.tensor((k, n), dtype)
            c = rt.matmul(a, b)
            launch = self.driver.launches[-1]
            kernel = mma("f16" if dtype == "float16" else "bf16", bm, bn)
            self.assertEqual((launch["function"], launch["grid"], launch["block"], launch["shared"]), (kernel.function, (-(-n // bn), -(-m // bm), 1), kernel.block, kernel.shared_bytes))
            self.assertEqual(self.arguments(launch), [m, n, k, 1.0, a.address, b.address, 0.0, c.address])

    def test_matmul_on_the_tiled_rung_before_sm_80_and_for_unaligned_operands(self):
        for (m, n, k), arch, dtype, name in [
            ((4096, 4096, 4096), "sm_75", "bfloat16", "hgemmTiledBf16"),
            ((128, 256, 64), "sm_70", "float16", "hgemmTiledF16"),
        ]:
            self.driver.arch = arch
            a, b = self.tensor((m, k), dtype), self.tensor((k, n), dtype)
            c = rt.matmul(a, b)
            launch = self.driver.launches[-1]
            self.assertEqual((launch["function"], launch["grid"], launch["block"], launch["shared"]), (rt.prebuilt().find(name).function, (-(-n // 16), -(-m // 16), 1), (16, 16, 1), 0))
            self.assertEqual(self.arguments(launch), [m, n, k, 1.0, a.address, b.address, 0.0, c.address])
        self.assertEqual(rt.matmul16_rung(rt.prebuilt(), "sm_90", 4096, 4096, 4096, False, True)[0], "hgemm-tiled-f16")  # unaligned
        self.assertEqual(rt.matmul16_rung(rt.prebuilt(), "sm_80", 1023, 1021, 1019, False, False)[0], "hgemm-tiled")  # unaligned

    def test_matmul_checks_and_its_operator(self):
        ops = rt.builtin_ops(self.torch)
        self.assertEqual(self.torch.registered["tskernel::matmul16"].schema, "(Tensor a, Tensor b) -> Tensor")
        for args, message in [
            ((self.tensor((4, 8)), self.tensor((8, 4), "float16")), r"parameter 'b' is float16, but 'a' is bfloat16"),
            ((self.tensor((4, 8)), self.tensor((7, 4))), r"a is 4×8 and b 7×4"),
            ((self.tensor((4, 8)), self.tensor((8, 4), contiguous=False)), r"parameter 'b' must be contiguous"),
            ((self.tensor((4, 8)), self.tensor((8, 4), device="cuda:1")), r"parameter 'b' is on cuda:1, but 'a' is on cuda:0"),
            ((self.tensor((4, 8), device="cpu"), self.tensor((8, 4))), r"parameter 'a' must be on a CUDA device"),
        ]:
            with self.assertRaisesRegex(rt.TskernelError, message):
                rt.matmul(*args)
        with self.assertRaisesRegex(rt.TskernelError, r"expects a bfloat16 or float16 tensor, got float32"):
            ops.matmul16(self.tensor((4, 8), "float32"), self.tensor((8, 4), "float32"))
        self.assertEqual(self.driver.launches, [])
        fake = ops.matmul16.fake(self.tensor((3, 5)), self.tensor((5, 7)))
        self.assertEqual((fake.shape, self.driver.launches), ((3, 7), []))
        # k = 0: zeros, no launch.
        self.assertTrue(rt.matmul(self.tensor((3, 0)), self.tensor((0, 5))).zeroed)
        self.assertEqual(self.driver.launches, [])

    def test_matmul_and_attention_take_the_routes_of_generated_operators(self):
        # Eagerly on plain tensors: straight to the kernels, the registered operators are not called.
        ops = rt.builtin_ops(self.torch)
        calls = []
        for name in ("tskernel::matmul16", "tskernel::attention_forward"):
            op = self.torch.registered[name]
            op.fn = (lambda fn, name: lambda *args: (calls.append(name), fn(*args))[1])(op.fn, name)
        a, b = self.tensor((128, 64)), self.tensor((64, 256))
        q, k, v = (self.tensor((1, 2, 128, 64)) for _ in range(3))
        rt.matmul(a, b)
        rt.attention(q, k, v)
        self.assertEqual((calls, self.torch.applied, len(self.driver.launches)), ([], [], 2))
        # A gradient wanted: the autograd functions, whose backward launches the same kernels as the operators'.
        c = rt.matmul(self.tensor((128, 64), requires_grad=True), b)
        rt.attention(self.tensor((1, 2, 128, 64), requires_grad=True), k, v, causal=True)
        (matmul_function, matmul_ctx), (attention_function, attention_ctx) = self.torch.applied
        self.assertEqual((calls, c.shape, attention_ctx.causal), ([], (128, 256), True))
        del self.driver.launches[:]
        grad_a, grad_b = matmul_function.backward(matmul_ctx, self.tensor((128, 256)))
        self.assertEqual((grad_a.shape, grad_b.shape, len(self.driver.launches), calls), ((128, 64), (64, 256), 2, []))
        dq, dk, dv, _, _ = attention_function.backward(attention_ctx, self.tensor((1, 2, 128, 64)), None)
        self.assertEqual((dq.shape, len(self.driver.launches), calls), ((1, 2, 128, 64), 5, []))
        # Under torch.compile (or a mode, or a subclass): the operators.
        self.torch.mode.compiling = True
        rt.matmul(a, b)
        rt.attention(q, k, v)
        self.assertEqual(calls, ["tskernel::matmul16", "tskernel::attention_forward"])
        self.assertIs(rt.builtin_ops(self.torch), ops)

    def test_matmul16_plans_a_shape_once_per_device_and_architecture(self):
        chosen = []
        rung = rt.matmul16_rung
        rt.matmul16_rung = lambda *args: (chosen.append(args[1:]), rung(*args))[1]
        try:
            for _ in range(3):
                rt.matmul(self.tensor((256, 64)), self.tensor((64, 512)))
            self.driver.arch = "sm_80"
            rt.matmul(self.tensor((256, 64)), self.tensor((64, 512)))
            rt.matmul(self.tensor((256, 64), "float16"), self.tensor((64, 512), "float16"))
        finally:
            rt.matmul16_rung = rung
        self.assertEqual(chosen, [("sm_90", 256, 512, 64, True, False, 132), ("sm_80", 256, 512, 64, True, False, 132), ("sm_80", 256, 512, 64, True, True, 132)])
        functions = [launch["function"] for launch in self.driver.launches]
        wgmma, mma = rt.prebuilt().find("hgemmWgmmaSmall", T="bf16").function, rt.prebuilt().find("hgemmMmaGuarded", T="bf16", BM=32, BN=32).function
        self.assertEqual(functions[:4], [wgmma, wgmma, wgmma, mma])
        # An unaligned operand is another plan (the tiled rung), not the aligned shape's.
        a = self.tensor((256, 64))
        a.address += 2
        rt.matmul(a, self.tensor((64, 512)))
        self.assertEqual(self.driver.launches[-1]["function"], rt.prebuilt().find("hgemmTiledBf16").function)

    def test_matmul_gradients(self):
        op = self.torch.registered["tskernel::matmul16"]
        a, b = self.tensor((128, 64)), self.tensor((64, 256))
        ctx = types.SimpleNamespace(save_for_backward=lambda *t: setattr(ctx, "saved_tensors", t), needs_input_grad=(True, True))
        c = op(a, b)
        op.setup_context(ctx, (a, b), c)
        grad_a, grad_b = op.backward(ctx, self.tensor((128, 256)))
        self.assertEqual((grad_a.shape, grad_b.shape), ((128, 64), (64, 256)))
        self.assertEqual([launch["grid"] for launch in self.driver.launches], [(4, 1, 1), (2, 1, 1), (2, 1, 1)])  # C, dA (128×64) and dB (64×256): their 64×128 tiles on the small-tile wgmma rung
        ctx.needs_input_grad = (False, True)
        self.assertIsNone(op.backward(ctx, self.tensor((128, 256)))[0])

    def test_attention_forward(self):
        q, k, v = (self.tensor((2, 3, 256, 128)) for _ in range(3))
        out = rt.attention(q, k, v, causal=True)
        self.assertEqual(out.shape, (2, 3, 256, 128))
        launch = self.driver.launches[-1]
        forward = rt.prebuilt().find("flashAttentionFold", D=128)
        self.assertEqual((launch["function"], launch["grid"], launch["block"], launch["shared"]), (forward.function, (2, 6, 1), (384, 1, 1), forward.shared_bytes))
        args = self.arguments(launch)
        rows = 2 * 3 * 256
        self.assertEqual(args[:4] + args[9:10] + args[11:], [q.address, k.address, v.address, out.address, 256, 1])
        self.assertAlmostEqual(args[10], 128**-0.5, places=6)
        self.assertEqual(self.maps_at(args[5:9]), [(q.address, rows, 128, 128, 64, "bf16"), (k.address, rows, 128, 128, 64, "bf16"), (v.address, rows, 128, 128, 64, "bf16"), (out.address, rows, 128, 64, 64, "bf16")])
        # D 64: the build of three consumers, 192 query rows a block (Q's map in boxes of 192 rows; 128 rows: one block).
        q64, k64, v64 = (self.tensor((1, 2, 128, 64)) for _ in range(3))
        out, lse = rt.attention_forward(q64, k64, v64, scale=0.5)
        launch = self.driver.launches[-1]
        args = self.arguments(launch)
        self.assertEqual((lse.shape, str(lse.dtype), args[4], args[9:]), ((1, 2, 128), "torch.float32", lse.address, [128, 0.5, 0]))
        forward64 = rt.prebuilt().find("flashAttentionFold", D=64, CONSUMERS=3)
        self.assertEqual((launch["function"], launch["grid"], launch["block"]), (forward64.function, (1, 2, 1), (512, 1, 1)))
        self.assertEqual(self.maps_at(args[5:6]), [(q64.address, 256, 64, 192, 64, "bf16")])

    def test_attention_checks(self):
        t = lambda shape=(1, 2, 128, 64), type="bfloat16", **kw: self.tensor(shape, type, **kw)  # noqa: E731
        for args, message in [
            ((t(type="float16"), t(type="float16"), t(type="float16")), r"parameter 'q' is float16; the FlashAttention kernels \(examples/flash-attention-fold.ts\) take bfloat16"),
            ((t(), t(type="float32"), t()), r"parameter 'k' expects a bfloat16 tensor, got float32"),
            ((t((1, 2, 128, 96)),) * 3, r"the head dimension must be 64 or 128, got 96"),
            ((t((1, 2, 100, 64)),) * 3, r"seq must be a positive multiple of 128, got 100"),
            ((t(), t((1, 2, 256, 64)), t()), r"parameter 'k' has shape \(1, 2, 256, 64\), but 'q' has \(1, 2, 128, 64\)"),
            ((t((2, 128, 64)),) * 3, r"parameter 'q' must be \[batch, heads, seq, headDim\]"),
            ((t(), t(), t(contiguous=False)), r"parameter 'v' must be contiguous"),
        ]:
            with self.assertRaisesRegex(rt.TskernelError, message):
                rt.attention(*args)
        self.driver.arch = "sm_89"
        with self.assertRaisesRegex(rt.TskernelError, r"need an sm_90 GPU .* this one is sm_89"):
            rt.attention(t(), t(), t())
        self.assertEqual(self.driver.launches, [])
        op = self.torch.registered["tskernel::attention_forward"]
        out, lse = op.fake(t(), t(), t(), False, 0.125)
        self.assertEqual((out.shape, lse.shape, self.driver.launches), ((1, 2, 128, 64), (1, 2, 128), []))

    def test_attention_gradients_through_the_backward_kernels(self):
        op = self.torch.registered["tskernel::attention_forward"]
        b, h, s, d = 2, 2, 384, 128
        q, k, v = (self.tensor((b, h, s, d)) for _ in range(3))
        ctx = types.SimpleNamespace(save_for_backward=lambda *t: setattr(ctx, "saved_tensors", t))
        out, lse = op(q, k, v, True, 0.25)
        op.setup_context(ctx, (q, k, v, True, 0.25), (out, lse))
        grad = self.tensor((b, h, s, d))
        del self.driver.launches[:]
        dq, dk, dv, none1, none2 = op.backward(ctx, grad, None)
        self.assertEqual((none1, none2, dq.shape, dk.shape, dv.shape), (None, None, (b, h, s, d), (b, h, s, d), (b, h, s, d)))
        pre, kv, qk = self.driver.launches
        rows = b * h * s
        kernels = rt.prebuilt()
        self.assertEqual([(x["function"], x["grid"], x["block"]) for x in (pre, kv, qk)], [
            (kernels.find("flashAttentionBackwardPre", D=d).function, (rows * d // 8 // 128, 1, 1), (128, 1, 1)),
            (kernels.find("flashAttentionBackwardKV", D=d).function, (3, 4, 1), (384, 1, 1)),
            (kernels.find("flashAttentionBackwardQ", D=d).function, (3, 4, 1), (384, 1, 1)),
        ])
        pre_args, kv_args, q_args = (self.arguments(x) for x in (pre, kv, qk))
        dsum = pre_args[2]
        self.assertEqual(pre_args, [out.address, grad.address, dsum, rows])
        self.assertEqual(kv_args[:8] + kv_args[14:15] + kv_args[16:], [q.address, k.address, v.address, grad.address, lse.address, dsum, dk.address, dv.address, s, 1])
        self.assertEqual(q_args[:7] + q_args[12:13] + q_args[14:], [q.address, k.address, v.address, grad.address, lse.address, dsum, dq.address, s, 1])
        self.assertEqual((kv_args[15], q_args[13]), (0.25, 0.25))
        spec = lambda t, box: (t.address, rows, d, box, 64, "bf16")  # noqa: E731
        self.assertEqual(self.maps_at(kv_args[8:14]), [spec(q, 64), spec(k, 128), spec(v, 128), spec(grad, 64), spec(dk, 64), spec(dv, 64)])
        self.assertEqual(self.maps_at(q_args[7:12]), [spec(q, 128), spec(k, 64), spec(v, 64), spec(grad, 128), spec(dq, 64)])

    def test_a_build_without_the_kernels_says_how_to_build_them(self):
        import tempfile

        with tempfile.TemporaryDirectory() as empty:
            os.environ["TSKERNEL_TORCH_KERNELS"] = empty
            rt._prebuilt = None
            with self.assertRaisesRegex(rt.TskernelError, r"has no manifest.json: tskernel build examples/hgemm-wgmma-ws.ts .* --target torch --cubin --arch sm_90"):
                rt.matmul(self.tensor((4, 8)), self.tensor((8, 4)))
            with open(os.path.join(empty, "manifest.json"), "w") as f:
                json.dump({"kernels": []}, f)
            rt._prebuilt = None
            with self.assertRaisesRegex(rt.TskernelError, r"has no flashAttentionFold with D = 64: build examples/flash-attention-fold.ts into it"):
                rt.attention(*(self.tensor((1, 1, 128, 64)) for _ in range(3)))


del Generated  # a base, not a test case

if __name__ == "__main__":
    unittest.main()
