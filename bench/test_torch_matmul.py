"""The parts of bench/torch-matmul.py that need no GPU and no PyTorch: plan checks, argument packing, the
numbers of input sets and rounds, the error verdicts and the report. Run with `python3 -m unittest
bench/test_torch_matmul.py` (tests/torch-matmul.test.ts runs it in the suite)."""

import ctypes
import importlib.util
import math
import os
import random
import unittest

_spec = importlib.util.spec_from_file_location("torch_matmul", os.path.join(os.path.dirname(__file__), "torch-matmul.py"))
tm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tm)

PARAMS = [
    {"name": "M", "kind": "scalar", "type": "i32"},
    {"name": "N", "kind": "scalar", "type": "i32"},
    {"name": "K", "kind": "scalar", "type": "i32"},
    {"name": "alpha", "kind": "scalar", "type": "f32"},
    {"name": "A", "kind": "buffer"},
    {"name": "B", "kind": "buffer"},
    {"name": "beta", "kind": "scalar", "type": "f32"},
    {"name": "C", "kind": "buffer"},
]


def candidate(ident, **extra):
    return {"id": ident, "rung": "r", "dir": 0, "cubin": "x.cubin", "function": ident, "constants": {}, "grid": [2, 3, 1], "block": [128, 1, 1], "dynamicSharedBytes": 0, "params": PARAMS, **extra}


class PlanTest(unittest.TestCase):
    def test_a_valid_plan_has_no_problems(self):
        plan = {"kernelDirs": ["k"], "shapes": [{"m": 8, "n": 8, "k": 8, "matmul": "a", "candidates": [candidate("a"), candidate("b")]}]}
        self.assertEqual(tm.validate_plan(plan), [])

    def test_a_rung_with_a_tensor_map_takes_it_after_c(self):
        mapped = candidate("w", params=PARAMS + [{"name": "mapA", "kind": "buffer"}], tensorMapA={"param": "mapA", "boxRows": 256, "boxCols": 32})
        plan = {"kernelDirs": ["k"], "shapes": [{"m": 8, "n": 8, "k": 8, "matmul": "w", "candidates": [mapped]}]}
        self.assertEqual(tm.validate_plan(plan), [])
        # Without the map's description, the extra buffer is not a matmul rung's.
        plan["shapes"][0]["candidates"] = [candidate("w", params=PARAMS + [{"name": "mapA", "kind": "buffer"}])]
        self.assertEqual(len(tm.validate_plan(plan)), 1)
        values = tm.argument_values(mapped["params"], 3, 4, 5, {"A": 0x1000, "B": 0x2000, "C": 0x3000, "mapA": 0x4000})
        self.assertEqual(values[-1], ("ptr", 0x4000))

    def test_the_clustered_tf32_rung_takes_a_and_b_maps_after_c(self):
        maps = [{"name": x, "kind": "buffer"} for x in ("mapA", "mapB")]
        clustered = candidate("t", params=PARAMS + maps, tensorMapA={"param": "mapA", "boxRows": 128, "boxCols": 32}, tensorMapB={"param": "mapB", "boxRows": 32, "boxCols": 32})
        plan = {"kernelDirs": ["k"], "shapes": [{"m": 8, "n": 8, "k": 8, "matmul": "t", "candidates": [clustered]}]}
        self.assertEqual(tm.validate_plan(plan), [])
        # Without B's map described, the extra buffer is not a matmul rung's.
        plan["shapes"][0]["candidates"] = [{**clustered, "tensorMapB": None}]
        self.assertEqual(len(tm.validate_plan(plan)), 1)
        values = tm.argument_values(clustered["params"], 3, 4, 5, {"A": 1, "B": 2, "C": 3, "mapA": 4, "mapB": 5})
        self.assertEqual(values[-2:], [("ptr", 4), ("ptr", 5)])

    def test_the_tf32_rungs_maps_round_as_they_copy_unless_asked_for_plain_ones(self):
        rounding = {"param": "mapA", "boxRows": 128, "boxCols": 32, "roundToTf32": True}
        self.assertEqual(tm.tensor_map_kind(rounding, "f32"), "tf32")
        self.assertEqual(tm.tensor_map_kind(rounding, "f32", plain_f32_maps=True), "f32")
        self.assertEqual(tm.tensor_map_kind({**rounding, "roundToTf32": None}, "f32"), "f32")
        self.assertEqual(tm.tensor_map_kind({"param": "mapA", "boxRows": 128, "boxCols": 64}, "bf16"), "bf16")
        self.assertEqual(tm.Driver.TENSOR_MAP_TYPES["tf32"], (11, 4))

    def test_a_16_bit_rung_takes_three_tensor_maps_after_c(self):
        maps = [{"name": x, "kind": "buffer"} for x in ("mapA", "mapB", "mapC")]
        half = candidate(
            "h",
            params=PARAMS + maps,
            dtype="bf16",
            tensorMapA={"param": "mapA", "boxRows": 128, "boxCols": 64},
            tensorMapsBC={"B": {"param": "mapB", "boxRows": 64, "boxCols": 64}, "C": {"param": "mapC", "boxRows": 64, "boxCols": 64}},
        )
        plan = {"kernelDirs": ["k"], "shapes": [{"m": 8, "n": 8, "k": 8, "matmul": "h", "candidates": [half]}]}
        self.assertEqual(tm.validate_plan(plan), [])
        # Without B's and C's maps described, the extra buffers are not a matmul rung's; a dtype must be bf16 or f16.
        plan["shapes"][0]["candidates"] = [{**half, "tensorMapsBC": None}, {**half, "id": "g", "dtype": "f8"}]
        problems = tm.validate_plan(plan)
        self.assertEqual(len(problems), 2)
        self.assertIn("not a matmul rung's", problems[0])
        self.assertIn("dtype 'f8'", problems[1])
        values = tm.argument_values(half["params"], 3, 4, 5, {"A": 1, "B": 2, "C": 3, "mapA": 4, "mapB": 5, "mapC": 6})
        self.assertEqual(values[-3:], [("ptr", 4), ("ptr", 5), ("ptr", 6)])

    def test_problems_are_named(self):
        plan = {
            "kernelDirs": ["k"],
            "shapes": [
                {
                    "m": 8,
                    "n": 8,
                    "k": 8,
                    "matmul": "missing",
                    "candidates": [candidate("a", dir=3), candidate("b", params=PARAMS[:7]), candidate("c", grid=[1, 1])],
                }
            ],
        }
        problems = tm.validate_plan(plan)
        self.assertEqual(len(problems), 4)
        self.assertIn("matmul()'s choice 'missing'", problems[0])
        self.assertIn("kernel directory 3", problems[1])
        self.assertIn("not a matmul rung's", problems[2])
        self.assertIn("3-D grid", problems[3])
        self.assertEqual(tm.validate_plan({"kernelDirs": []}), ["the plan has no shapes"])

    def test_stream_k_candidates_need_their_block_count(self):
        params = PARAMS + [{"name": "partials", "kind": "buffer"}, {"name": "arrivals", "kind": "buffer"}, {"name": "streamBlocks", "kind": "scalar", "type": "i32"}]
        good = candidate("a", params=params, streamK={"blocks": 132, "partials": 132 * 32768, "arrivals": 132})
        plan = {"kernelDirs": ["k"], "shapes": [{"m": 8, "n": 8, "k": 8, "matmul": "a", "candidates": [good, candidate("b", params=params)]}]}
        problems = tm.validate_plan(plan)
        self.assertEqual(len(problems), 1)
        self.assertIn("b is a stream-k kernel without streamK.blocks", problems[0])


class ArgumentsTest(unittest.TestCase):
    def test_values_follow_the_parameters(self):
        m, n, k = random.randint(1, 5000), random.randint(1, 5000), random.randint(1, 5000)
        values = tm.argument_values(PARAMS, m, n, k, {"A": 0x1000, "B": 0x2000, "C": 0x3000})
        self.assertEqual(values, [("i32", m), ("i32", n), ("i32", k), ("f32", 1.0), ("ptr", 0x1000), ("ptr", 0x2000), ("f32", 0.0), ("ptr", 0x3000)])

    def test_stream_k_values_follow_the_parameters(self):
        params = PARAMS + [{"name": "partials", "kind": "buffer"}, {"name": "arrivals", "kind": "buffer"}, {"name": "streamBlocks", "kind": "scalar", "type": "i32"}]
        blocks = random.randint(1, 1000)
        values = tm.argument_values(params, 4, 5, 6, {"A": 1, "B": 2, "C": 3, "partials": 4, "arrivals": 5}, blocks)
        self.assertEqual(values[8:], [("ptr", 4), ("ptr", 5), ("i32", blocks)])

    def test_packed_arguments_point_at_each_value(self):
        m = random.randint(1, 1 << 30)
        address = random.randint(1 << 20, 1 << 40)
        array, storage = tm.pack_arguments([("i32", m), ("f32", 0.75), ("ptr", address), ("u32", 7)])
        self.assertEqual(len(array), 4)
        self.assertEqual(ctypes.cast(array[0], ctypes.POINTER(ctypes.c_int32))[0], m)
        self.assertEqual(ctypes.cast(array[1], ctypes.POINTER(ctypes.c_float))[0], 0.75)
        self.assertEqual(ctypes.cast(array[2], ctypes.POINTER(ctypes.c_void_p))[0], address)
        self.assertEqual(ctypes.cast(array[3], ctypes.POINTER(ctypes.c_uint32))[0], 7)
        self.assertEqual(len(storage), 4)

    def test_unknown_kinds_are_refused(self):
        with self.assertRaises(ValueError):
            tm.pack_arguments([("f64", 1.0)])
        with self.assertRaises(ValueError):
            tm.argument_values([{"name": "BM", "kind": "const", "type": "i32"}], 1, 1, 1, {})


class CountsTest(unittest.TestCase):
    def test_input_sets_exceed_twice_the_l2_within_bounds(self):
        l2 = 50 * 2**20
        for m, n, k in [(1000, 1000, 1000), (1023, 1021, 1019), (2048, 2048, 2048), (4096, 4096, 1024)]:
            sets = tm.input_sets(m, n, k, l2)
            per_set = 4 * (m * k + k * n + m * n)
            self.assertTrue(sets * per_set > 2 * l2 or sets == 8, (m, n, k, sets))
            self.assertTrue(2 <= sets <= 8)
        self.assertEqual(tm.input_sets(8192, 8192, 8192, l2), 2)

    def test_rounds_fit_the_budget(self):
        self.assertEqual(tm.rounds_for(25.0, 40), 7)  # 8192³: 1 s a round, the floor
        self.assertEqual(tm.rounds_for(0.05, 20), 31)  # 1000³: the ceiling
        self.assertEqual(tm.rounds_for(3.0, 100), 20)

    def test_median(self):
        self.assertEqual(tm.median([3.0, 1.0, 2.0]), 2.0)
        self.assertEqual(tm.median([4.0, 1.0, 2.0, 3.0]), 2.5)
        with self.assertRaises(ValueError):
            tm.median([])


class ErrorTest(unittest.TestCase):
    def test_relative_error_against_float64(self):
        try:
            import numpy
        except ImportError:
            self.skipTest("numpy is not installed")
        rng = numpy.random.default_rng()
        a = rng.uniform(-1, 1, (37, 29))
        b = rng.uniform(-1, 1, (29, 41))
        ref = a @ b
        out = (a.astype(numpy.float32) @ b.astype(numpy.float32)).astype(numpy.float32)
        error, nonfinite = tm.relative_error(out, ref)
        self.assertEqual(nonfinite, 0)
        self.assertGreater(error, 0)
        self.assertLess(error, tm.fp32_bound(29))
        out[3, 4] = numpy.nan
        error, nonfinite = tm.relative_error(out, ref)
        self.assertEqual(nonfinite, 1)
        self.assertTrue(math.isnan(error))

    def test_verdicts(self):
        self.assertEqual(tm.verdict(1e-7, 0, 1000), (True, ""))
        ok, why = tm.verdict(1e-3, 0, 1000)
        self.assertFalse(ok)
        self.assertIn("over the FP32 bound", why)
        ok, why = tm.verdict(float("nan"), 12, 1000)
        self.assertFalse(ok)
        self.assertIn("12 non-finite", why)
        self.assertFalse(tm.verdict(float("nan"), 0, 1000)[0])
        # TF32 results: 2.6e-4 (what torch.mm TF32 measures) passes its bound, not FP32's; 0.01 passes neither.
        self.assertEqual(tm.verdict(2.6e-4, 0, 1000, "tf32"), (True, ""))
        self.assertFalse(tm.verdict(2.6e-4, 0, 1000)[0])
        ok, why = tm.verdict(1e-2, 0, 4096, "tf32")
        self.assertFalse(ok)
        self.assertIn("over the TF32 bound", why)

    def test_16_bit_verdicts(self):
        # torch.mm's own errors on the H100 (1.66e-3 bf16, 2.07e-4 f16) pass; bf16's error is no f16 result.
        self.assertAlmostEqual(tm.half_bound(4096, "bf16"), 2**-8 + 4096 * 2**-23)
        self.assertEqual(tm.verdict(1.66e-3, 0, 4096, "bf16"), (True, ""))
        self.assertEqual(tm.verdict(2.07e-4, 0, 4096, "f16"), (True, ""))
        ok, why = tm.verdict(1.66e-3, 0, 4096, "f16")
        self.assertFalse(ok)
        self.assertIn("over the f16 bound", why)
        self.assertFalse(tm.verdict(1e-2, 0, 1024, "bf16")[0])

    def test_worst_error_prefers_non_finite(self):
        self.assertEqual(tm.worst_error([(1e-7, 0), (3e-7, 0)]), (3e-7, 0))
        self.assertEqual(tm.worst_error([(1e-7, 0), (float("nan"), 5)])[1], 5)


class ReportTest(unittest.TestCase):
    def test_summary_and_table(self):
        shape = {"m": 1000, "n": 1000, "k": 1000, "matmul": "ours-a", "candidates": [candidate("ours-a"), candidate("ours-b")]}
        timings = {"torch.mm FP32": [0.070, 0.062, 0.064], "torch.mm TF32": [0.02, 0.02, 0.021], "ours-a": [0.066, 0.064, 0.065], "ours-b": [0.060, 0.061, 0.059]}
        errors = {"ours-a": (4e-7, 0), "ours-b": (float("nan"), 3), "torch.mm FP32": (4e-7, 0), "torch.mm TF32": (2.6e-4, 0)}
        summary = tm.summarize_shape(shape, timings, errors, {"ours-a": 135, "ours-b": 96})
        self.assertAlmostEqual(summary["torchFp32"]["ms"], 0.064)
        self.assertAlmostEqual(summary["matmul"]["percentOfTorchFp32"], 100 * 0.064 / 0.065)
        self.assertEqual(summary["matmul"]["registers"], 135)
        # The faster candidate failed its check (NaN survived): it is not the best.
        self.assertFalse(next(r for r in summary["candidates"] if r["id"] == "ours-b")["pass"])
        self.assertEqual(summary["best"]["id"], "ours-a")
        self.assertAlmostEqual(summary["matmul"]["tflops"], 2e9 / (0.065 * 1e9))
        table = tm.format_table({"shapes": [summary]})
        self.assertIn("1000x1000x1000", table)
        self.assertIn("ours-a", table.splitlines()[1])

    def test_tf32_rows_are_compared_with_torch_tf32(self):
        tensor = {**candidate("ours-tc"), "precision": "tf32"}
        shape = {"m": 4096, "n": 4096, "k": 4096, "matmul": "ours-a", "matmulTf32": "ours-tc", "candidates": [candidate("ours-a"), tensor]}
        timings = {"torch.mm FP32": [2.0, 2.0, 2.0], "torch.mm TF32": [0.4, 0.4, 0.4], "ours-a": [2.1, 2.1, 2.1], "ours-tc": [0.8, 0.8, 0.8]}
        errors = {"ours-a": (4e-7, 0), "ours-tc": (2.6e-4, 0), "torch.mm FP32": (4e-7, 0), "torch.mm TF32": (2.6e-4, 0)}
        summary = tm.summarize_shape(shape, timings, errors, {})
        # The TF32 kernel passes its own bound and is not the best FP32 kernel, however fast.
        self.assertEqual(summary["best"]["id"], "ours-a")
        self.assertEqual(summary["bestTf32"]["id"], "ours-tc")
        self.assertEqual(summary["matmulTf32"]["id"], "ours-tc")
        self.assertAlmostEqual(summary["bestTf32"]["percentOfTorchTf32"], 50.0)
        self.assertIn(" 50.0%", tm.format_table({"shapes": [summary]}).splitlines()[1])

    def test_16_bit_rows_are_compared_with_torch_in_their_type(self):
        half = {**candidate("ours-h"), "dtype": "bf16"}
        wrong = {**candidate("ours-w"), "dtype": "bf16"}
        f16 = {**candidate("ours-f"), "dtype": "f16"}
        shape = {"m": 4096, "n": 4096, "k": 4096, "matmul": "ours-a", "matmulBf16": "ours-h", "matmulF16": "ours-f", "candidates": [candidate("ours-a"), half, wrong, f16]}
        timings = {
            "torch.mm FP32": [2.0] * 3, "torch.mm TF32": [0.4] * 3, "torch.mm bf16": [0.2] * 3, "torch.mm f16": [0.21] * 3,
            "ours-a": [2.1] * 3, "ours-h": [0.25] * 3, "ours-w": [0.1] * 3, "ours-f": [0.2] * 3,
        }
        errors = {"ours-a": (4e-7, 0), "ours-h": (1.66e-3, 0), "ours-w": (0.3, 0), "ours-f": (2.07e-4, 0), "torch.mm bf16": (1.66e-3, 0), "torch.mm f16": (2.07e-4, 0)}
        summary = tm.summarize_shape(shape, timings, errors, {})
        bf16 = summary["halves"]["bf16"]
        # The fast but wrong bf16 kernel is not the best; percentages are of torch.mm in the row's own type.
        self.assertEqual(bf16["best"]["id"], "ours-h")
        self.assertEqual(bf16["matmul"]["id"], "ours-h")
        self.assertAlmostEqual(bf16["best"]["percentOfTorch16"], 80.0)
        self.assertAlmostEqual(summary["halves"]["f16"]["best"]["percentOfTorch16"], 105.0)
        self.assertFalse(next(r for r in summary["candidates"] if r["id"] == "ours-w")["pass"])
        # No 16-bit row is the best FP32 or TF32 kernel.
        self.assertEqual(summary["best"]["id"], "ours-a")
        table = tm.format_table({"shapes": [summary]}).splitlines()
        self.assertEqual(len(table), 5)
        self.assertIn("bf16", table[3])
        self.assertIn(" 80.0%", table[3])
        self.assertIn("105.0%", table[4])



class TimingTest(unittest.TestCase):
    def test_interleaved_rounds_rotate_names_and_input_sets(self):
        # A stand-in for torch.cuda: events that read a clock the launches advance by their own cost.
        clock = [0.0]
        sleeps = []

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = clock[0]

            def elapsed_time(self, other):
                return other.at - self.at

        class Cuda:
            @staticmethod
            def _sleep(cycles):
                sleeps.append(cycles)

            @staticmethod
            def synchronize():
                pass

        Cuda.Event = Event

        class Torch:
            cuda = Cuda

        calls = []
        cost = {"a": 1.0, "b": 2.0, "c": 3.0}

        def launcher(name):
            def run(i):
                calls.append((name, i))
                clock[0] += cost[name]

            return run

        launch = {name: launcher(name) for name in cost}
        times = tm.time_interleaved(Torch, launch, ["a", "b", "c"], 4, 2)
        self.assertEqual(len(sleeps), 4)
        self.assertEqual({name: len(t) for name, t in times.items()}, {"a": 4, "b": 4, "c": 4})
        self.assertEqual(times["b"], [2.0] * 4)
        # Round r starts at name r % 3 and launch i of the round takes input set (r + i) % 2.
        self.assertEqual(calls[:6], [("a", 0), ("b", 1), ("c", 0), ("b", 1), ("c", 0), ("a", 1)])


if __name__ == "__main__":
    unittest.main()
