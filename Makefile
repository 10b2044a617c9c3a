# The front door. `make demo` and `make test` work on a fresh machine: both run `setup` first.
.PHONY: setup test test-scala test-python demo assembly cluster-up cluster-down clean

PYTHON := .venv/bin/python
SBT := build/sbt
BROKERS ?= 1

setup:
	@build/setup.sh

# The assembly jar (the Python suites load it), Scala suites (unit + integration), then Python
# suites; a summary line closes the run.
test: setup
	@rm -rf connector-scala/target/test-reports target/pytest
	@status=0; \
	  $(SBT) connector/assembly test || status=1; \
	  $(PYTHON) -m pytest -q tests --junitxml=target/pytest/junit.xml || status=1; \
	  $(PYTHON) tests/summarize.py connector-scala/target/test-reports target/pytest; \
	  exit $$status

test-scala: setup
	$(SBT) test

test-python: setup
	$(SBT) connector/assembly
	$(PYTHON) -m pytest -q tests

demo: setup
	$(SBT) "connector/Test/runMain io.sparkgazette.demo.ClientDemo"

# The connector's shaded jar; its path is the last line printed.
assembly: setup
	@$(SBT) connector/assembly >&2
	@ls connector-scala/target/scala-2.13/spark-gazette-assembly-*.jar

cluster-up: setup
	@$(PYTHON) tests/harness/cluster.py up --brokers $(BROKERS) --specs tests/specs/examples.yaml
	@echo "(written to .cluster/env; stop it with: make cluster-down)"

cluster-down:
	@$(PYTHON) tests/harness/cluster.py down

clean:
	rm -rf target connector-scala/target project/target project/project .cluster
