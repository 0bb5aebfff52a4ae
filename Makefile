# Set-up and everyday commands. `make run` and `make test` are all a fresh machine needs.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bytecode bench-beir bench-speed bench-tui bench-server

run: bytecode  ## open the explorer on sample_docs/
	$(BIN)/explorer sample_docs

# Three worker processes on two cores: much of the suite waits (on processes it starts, on the
# terminal it drives, on a live index's debounce), and a third worker fills those waits. The whole
# suite, one run each on one machine, back to back: 872 s with two workers, 733 s with three,
# for about the same CPU (1,330 and 1,364 s; stop 60). Work stealing: a worker that runs out of tests takes some of
# another's queue, so none idles at the end while another still holds long real-model tests.
test: bytecode  ## the whole test suite (unit, UI, end to end with the real model)
	$(BIN)/python -m pytest -q -n 3 --dist worksteal

lint: $(STAMP)  ## ruff, the formatter, mypy (strict on the core) and the import contracts
	$(BIN)/ruff check explorer tests benchmarks
	$(BIN)/ruff format --check explorer tests benchmarks
	$(BIN)/mypy
	PYTHONPATH=$(CURDIR) $(BIN)/lint-imports

bench-beir: $(STAMP)
	$(BIN)/python benchmarks/beir.py --data ../shared/bench/scifact --split train

bench-speed: $(STAMP)
	$(BIN)/python benchmarks/speed.py --corpus ../shared/corpora/nginx-docs

bench-tui: $(STAMP)
	$(BIN)/python benchmarks/tui.py --corpus ../shared/corpora/nginx-docs

bench-server: $(STAMP)
	$(BIN)/python benchmarks/server.py --corpus ../shared/corpora/nginx-docs

# Bytecode of explorer's own modules and the tests' (not their corpora), brought up to date
# before each run: pip compiles what it installs but not an editable install's source, and where
# PYTHONDONTWRITEBYTECODE is set (many containers set it; this machine does) every process
# compiled explorer's modules again as it imported them. Here, alternated: the window's first
# frame on the vault 1.61-1.87 s without, 1.13-1.41 s with; `import explorer.tui.app` 0.74-0.91 s
# against 0.60-0.70 s.
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q -j 0 -x '/corpus/' explorer tests benchmarks >/dev/null

# torch is installed first, pinned, by pip: the CPU build 2.13.0, which lies on this machine's disk
# where pip looks and uv does not (an unpinned torch pulls CUDA). uv then installs the rest beside
# it, the same versions pip resolves, bytecode compiled as pip does: 32 s where pip took 3-4.5 min
# of the CI's time (its resolver and installer; stop 61). Where uv cannot be had, pip does it all.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	if $(BIN)/python -m pip install --quiet uv; then \
		$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e '.[test]'; \
	else \
		$(BIN)/python -m pip install --quiet -e '.[test]'; \
	fi
	touch $(STAMP)
