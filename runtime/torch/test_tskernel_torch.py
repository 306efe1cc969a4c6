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
import os
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

    def custom_op(name, mutates_args):
        def wrap(fn):
            op = CustomOp(name, fn, mutates_args)
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
        registered = {name: op.mutates_args for name, op in self.torch.registered.items()}
        self.assertEqual(
            registered,
            {f"tskernel_torch_ops::{n}": m for n, m in [("scale", ()), ("scale_backward", ()), ("axpy", ("y",)), ("histogram", ()), ("row_sums", ()), ("tile", ())]},
        )
        self.assertTrue(all(op.fake is not None for op in self.torch.registered.values()))
        self.assertEqual(self.module.__all__, ["scale", "scale_backward", "axpy", "histogram", "row_sums", "tile"])

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
        self.assertEqual((launch["function"], launch["grid"], grad_x.shape), ("geluBackward", (4, 1, 1), (1000,)))


del Generated  # a base, not a test case

if __name__ == "__main__":
    unittest.main()
