# sglc: the SGL compiler.  `make demo` sets everything up and runs an example;
# `make test` runs the test suite and the linter.

PY ?= .venv/bin/python
VENV ?= .venv
SGLC = $(VENV)/bin/sglc
RUFF = $(VENV)/bin/ruff
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-run-as-root)

.PHONY: demo test check docs docs-site golden-update bench bench-quick sanitize fuzz fuzz-frontend clean venv venv-test

$(VENV)/bin/python:
	python3 -m venv $(VENV)

venv: $(VENV)/bin/python
	$(VENV)/bin/pip install -q -e .

venv-test: $(VENV)/bin/python
	@$(PY) -c "import pytest, ruff, sglc" 2>/dev/null || $(VENV)/bin/pip install -q -e '.[test]'

demo: venv
	@if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "== MPI is missing: installing Open MPI (apt-get)"; \
	    apt-get update && apt-get install -y openmpi-bin libopenmpi-dev || true; \
	  fi; \
	fi
	@if command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; then \
	  echo "== $(SGLC) examples/reduce.sgl -o build/reduce --target mpi"; \
	  $(SGLC) examples/reduce.sgl -o build/reduce --target mpi && \
	  echo "== mpirun -np 2 --oversubscribe --bind-to none $(ROOT_FLAG) build/reduce --sgl-shape 2x2" && \
	  mpirun -np 2 --oversubscribe --bind-to none $(ROOT_FLAG) build/reduce --sgl-shape 2x2; \
	else \
	  echo "== MPI is missing (no mpicc/mpirun): using the omp target (threads only)"; \
	  echo "== $(SGLC) examples/reduce.sgl -o build/reduce --target omp"; \
	  $(SGLC) examples/reduce.sgl -o build/reduce --target omp && \
	  echo "== build/reduce --sgl-shape 4" && \
	  build/reduce --sgl-shape 4; \
	fi

# pytest exit status 5 (no test ran) is a failure too.  First every test that
# measures no time, in two concurrent pytest processes (tests/par.py; the
# program matrix and the run-time error programs split by program,
# --program-shard; the tests marked `timed` left out), then the tests marked
# `timed` (a cancellation within a second, a job gone within five), alone.
# Every tests/test_*.py is in one of the three lists (tests/test_harness.py
# checks); the lists are balanced by time, about 14 minutes each on 2 cores.
TEST_PAR1 = tests/test_sanitize.py tests/test_frontend.py tests/test_highlight.py \
  tests/test_passes.py tests/test_pipeline.py tests/test_builtins_table.py tests/test_dumps.py \
  tests/test_bounds.py tests/test_caches.py tests/test_harness.py tests/test_refinterp.py \
  tests/test_bitwise.py tests/test_deep_literals.py tests/test_doctor.py tests/test_out_of_memory.py \
  tests/test_cli.py tests/test_embed_leaks.py tests/test_packaging.py tests/test_recursion.py \
  tests/test_big_buffers.py
TEST_PAR2 = tests/test_difftest.py tests/test_tsan.py tests/test_fmt.py tests/test_errors.py \
  tests/test_emit.py tests/test_warnings.py tests/test_conformance.py \
  tests/test_diagnostics_format.py tests/test_rtconst.py tests/test_snapshots.py \
  tests/test_moves.py tests/test_sort.py tests/test_runtime_c.py tests/test_files.py \
  tests/test_tutorial.py tests/test_report.py tests/test_lsp.py tests/test_reductions.py \
  tests/test_isolation.py tests/test_cluster.py tests/test_bench_smoke.py tests/test_speeds.py \
  tests/test_bench_loops.py tests/test_output_spill.py tests/test_progress.py tests/test_shapes.py \
  tests/test_embed.py tests/test_instr.py tests/test_crash_report.py tests/test_embed_structs.py \
  tests/test_mpi_chunks.py tests/test_embed_signals.py tests/test_thread_limit.py \
  tests/test_sigpipe.py tests/test_teams.py tests/test_output.py tests/test_soak.py \
  tests/test_nodevars.py tests/test_docs_site.py tests/test_idle_threads.py \
  tests/test_embed_strings.py
TEST_SHARDED = tests/test_programs.py tests/test_runtime_errors.py
test: venv-test
	$(PY) tests/par.py -q --durations=10 -m "not timed" $(TEST_SHARDED) --program-shard 0/2 \
	  $(TEST_PAR1) :: -q --durations=10 -m "not timed" $(TEST_SHARDED) --program-shard 1/2 $(TEST_PAR2)
	$(PY) -m pytest -q --durations=10 -m timed $(TEST_SHARDED) $(TEST_PAR1) $(TEST_PAR2)
	$(RUFF) check sglc tests $(wildcard bench)

# The inner loop (under 3 minutes on 2 cores): the front end, every golden,
# the snapshots, the runtime's unit tests, every program on seq 2x3, and the
# examples (ours and the shared ones) on 2 MPI processes; in two concurrent
# pytest processes (tests/par.py), none of whose tests measures time.  Left
# to `make test`: the tests marked `timed`, the runtime's -Werror builds but
# the MPI one at -O2 (about 60 s), the block tests' runs with the
# huge-page advice set (SGL_MADVISE_HUGEPAGE=0 and 1, 6 s each: their waits),
# and the unsanitized sort test with the AVX-512 quicksort off
# (SGL_SORT_VEC=0: the radix paths it takes over, about 20 s).
CHECK_FILES = tests/test_frontend.py tests/test_errors.py tests/test_conformance.py \
  tests/test_snapshots.py tests/test_runtime_c.py tests/test_caches.py \
  $(wildcard tests/test_passes.py tests/test_emit.py tests/test_highlight.py tests/test_rtconst.py)
CHECK_K = not test_program or seq-2x3 or (2x2-np2 and (examples or shared))
# the runtime's sanitized sort test (about 35 s) runs beside the programs,
# which take less than the rest (about 135 s against 165 s)
CHECK_MOVED = tests/test_runtime_c.py::test_c_sort_tests_sanitized
check: venv-test
	$(PY) tests/par.py -q -x tests/test_programs.py $(CHECK_MOVED) -k "$(CHECK_K)" :: \
	  -q -x -m "not timed" $(CHECK_FILES) $(foreach t,$(CHECK_MOVED),--deselect $(t)) \
	  -k "not (werror and (O3 or seq or omp)) and not (block_tests and hp) and not vec0"
	$(RUFF) check sglc tests $(wildcard bench)

golden-update: venv-test
	$(PY) -m pytest -q tests/test_refinterp.py -k golden --update-golden
	$(PY) -m pytest -q tests/test_programs.py $(wildcard tests/test_errors.py tests/test_warnings.py) \
	  $(wildcard tests/test_snapshots.py tests/test_emit_snapshots.py tests/test_dumps.py) --update-golden

# The documentation site (MkDocs, mkdocs.yml): docs/ into build/site, SGL
# highlighted by sglc's own Pygments lexer.  Needs the `docs` extra.
docs-site: venv
	@$(PY) -c "import mkdocs" 2>/dev/null || $(VENV)/bin/pip install -q -e '.[docs]'
	$(VENV)/bin/mkdocs build -q -f mkdocs.yml -d build/site
	@echo "== the site is in build/site (open build/site/index.html)"

# docs/cli.md from the click definitions (tests/test_cli.py checks it is current).
docs: venv
	$(PY) -c 'from sglc.cli import cli_doc; print(cli_doc(), end="")' > docs/cli.md

bench: venv
	$(PY) bench/run.py

bench-quick: venv
	$(PY) bench/run.py --quick

# ASan + UBSan + LeakSanitizer on every test program, ThreadSanitizer on the omp
# target (clang, libomp and Archer): tests/sanitize.py.  ONLY=asan or ONLY=tsan
# runs one part.
sanitize: venv
	$(PY) tests/sanitize.py $(if $(ONLY),--only $(ONLY))

# Differential testing: N random programs, every target and shape (about 4 s each).
N ?= 1000
fuzz: venv
	$(PY) tests/gen/difftest.py --count $(N) --keep-going

# 10,000 mutated sources through the front end: never a traceback or exit 3.
fuzz-frontend: venv
	$(PY) tests/gen/fuzz_frontend.py --count 10000

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache .hypothesis tests/_build bench/_build
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -print0 | xargs -0 rm -rf
	for f in examples/*.sgl; do rm -f "$${f%.sgl}" "$${f%.sgl}.c"; done
