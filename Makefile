# The front door. `make demo` and `make test` work on a fresh machine: each installs what it needs first
# (`setup-demo`, `setup`).
.PHONY: jar lint-python test-idle-reads test-stores test-tokens test-spark35 test-spark35-scala213 lint format options-doc chaos chaos-real-time chaos-ledger chaos-network chaos-network-short test-compose soak dist test-compat test-compat-real-time test-mutations bench bench-tiny setup-bench-kafka bench-client bench-source bench-journals bench-latency bench-decode bench-sink bench-backfill test-source-properties test-sink-long setup setup-demo test test-scala test-python demo quickstart assembly publish-local python-package cluster-up cluster-down clean

PYTHON := .venv/bin/python
SBT := build/sbt
BROKERS ?= 1
STORE ?= file
# The one version of a release (jar, POM and wheel): python/pyproject.toml's.
VERSION := $(shell sed -n 's/^version *= *"\(.*\)"/\1/p' python/pyproject.toml)
JAR := connector-scala/target/scala-2.13/spark-gazette-assembly-$(VERSION).jar
# The Spark 3.5 builds (build.sbt: connectorSpark35 for Scala 2.12, connectorSpark35Scala213).
JAR_SPARK35 := connector-scala/target/spark-3.5_2.12/scala-2.12/spark-gazette-3.5-assembly-$(VERSION).jar
JAR_SPARK35_SCALA213 := connector-scala/target/spark-3.5_2.13/scala-2.13/spark-gazette-3.5-assembly-$(VERSION).jar
# The Spark line that demo, assembly, chaos and the benchmarks run on: SPARK=4 (Spark 4.x, Scala
# 2.13, in .venv) or SPARK=3.5 (Spark 3.5, Scala 2.12, in .venv-spark3.5).
SPARK ?= 4
ifeq ($(SPARK),3.5)
LINE := connectorSpark35
LINE_PYTHON := .venv-spark3.5/bin/python
else ifeq ($(SPARK),4)
LINE := connector
LINE_PYTHON := $(PYTHON)
else
$(error SPARK=$(SPARK): the connector is built for SPARK=4 and SPARK=3.5)
endif
# What `make test` runs on Spark 3.5 / Scala 2.12, judged by Gazette's Go reader as on Spark 4: the
# pure suites, the source's stores, typed rows and random schedules (fewer), the sink's exactly-once
# writes and epochs, and what the connector finds in Spark by name (ReflectionSuite, 15 s); then the
# Python package and wheel suites and a short chaos run. What differs between the lines is Spark's,
# not the connector's (a few shims): the source's edges and the faults
# of brokers, etcd and stores, which the connector's client meets alike on both, run on Spark 3.5 in
# `make test-spark35`.
SPARK35_SUITES := io.sparkgazette.message.* io.sparkgazette.client.*Suite \
  io.sparkgazette.spark.*OptionsSuite io.sparkgazette.spark.errors.GazetteErrorsSuite \
  io.sparkgazette.spark.source.SourcePropertyIntegrationSuite \
  io.sparkgazette.spark.source.rows.TypedRowsIntegrationSuite io.sparkgazette.spark.source.SourceStoreIntegrationSuite \
  io.sparkgazette.spark.sink.SinkIntegrationSuite io.sparkgazette.spark.sink.SinkEpochsIntegrationSuite \
  io.sparkgazette.spark.reflection.ReflectionSuite
# The short micro-batch chaos run: make test runs it on Spark 3.5, killing one kind the seed draws
# (the real-time one on Spark 4.3, two kinds), `make chaos` the long one on either. (Defined before the lists that name it: `:=` expands at once.)
MICRO_BATCH_CHAOS := tests/chaos/test_chaos.py::test_the_pipeline_is_exactly_once_across_kills_of_drivers_executors_and_brokers
SPARK35_PYTHON_SUITES := tests/test_python_package.py tests/test_wheel.py $(MICRO_BATCH_CHAOS)
# The short network-fault runs: make test runs the micro-batch one with two faults (a partition of
# Spark from the brokers, connections reset; on Spark 4.3), `make chaos-network-short` both, with four.
REAL_TIME_NETWORK_CHAOS := tests/chaos/test_network_chaos.py::test_the_real_time_pipeline_is_exactly_once_across_network_faults
# The store faults' short run (MinIO in a namespace, history reads), in `make chaos-network-short` only.
STORE_NETWORK_CHAOS := tests/chaos/test_network_chaos.py::test_history_reads_are_whole_across_store_faults
# The short run of tokens from a provider class, in `make test-tokens` (whose five-minute provider run
# covers it); make test runs the token file's.
TOKENS_PROVIDER := tests/tokens/test_tokens.py::test_a_stream_and_batch_outlive_tokens_from_a_provider_class

# What every target but the demo's needs (suites, benchmarks, faults); setup-demo only what
# `make demo` and `make quickstart` run, on SPARK's line.
setup:
	@build/setup.sh

setup-demo:
	@build/setup.sh demo $(SPARK)

# Lint of Python, the assembly jars (the Python suites load them), the Scala suites (unit +
# integration) on Spark 4 and SPARK35_SUITES on Spark 3.5 / Scala 2.12, the Scala formatting,
# then the Python suites on pyspark 4 and SPARK35_PYTHON_SUITES on pyspark 3.5; the closing lines
# give each stage's seconds (naming any that failed, a lint failure among them) and the tests' sum.
test: setup
	@rm -rf connector-scala/target/test-reports connector-scala/target/spark-3.5_2.12/test-reports target/pytest \
	  target/mutations/junit target/stages && mkdir -p target
	@status=0; \
	  stage() { name=$$1; shift; t=$$(date +%s); "$$@"; rc=$$?; \
	    echo "$$name $$(( $$(date +%s) - t )) $$rc" >> target/stages; [ $$rc = 0 ] || status=1; }; \
	  stage lint $(MAKE) -s lint-python; \
	  stage scala $(SBT) connector/assembly connector/publishM2 connectorSpark35/assembly connectorSpark35/publishM2 test \
	    "connectorSpark35/testOnly $(SPARK35_SUITES)" $(SCALA_FORMAT_CHECKS); \
	  stage mutations env MUTATIONS_SAMPLE=$(MUTATIONS_SAMPLE) $(if $(MUTATIONS_SEED),MUTATIONS_SEED=$(MUTATIONS_SEED)) \
	    $(PYTHON) tests/mutations/run.py --no-baseline --junit target/mutations/junit; \
	  stage package $(MAKE) -s python-package; \
	  stage package-3.5 $(MAKE) -s python-package PYTHON=.venv-spark3.5/bin/python; \
	  stage python env GAZETTE_LOCAL_BINARIES=required GAZETTE_NETWORK_FAULTS=required CHAOS_NETWORK_SHORT_CYCLES=2 \
	    CHAOS_SHORT_KINDS=2 BENCH_TINY_ONLY=source \
	    $(PYTHON) -m pytest -q tests --ignore=tests/soak --deselect $(MICRO_BATCH_CHAOS) --deselect $(REAL_TIME_NETWORK_CHAOS) \
	    --deselect $(STORE_NETWORK_CHAOS) --deselect $(TOKENS_PROVIDER) \
	    --durations=15 --junitxml=target/pytest/junit.xml; \
	  stage python-3.5 env GAZETTE_LOCAL_BINARIES=required CHAOS_SHORT_KINDS=1 .venv-spark3.5/bin/python -m pytest -q \
	    $(SPARK35_PYTHON_SUITES) --durations=10 --junitxml=target/pytest/junit-spark3.5.xml; \
	  $(PYTHON) tests/harness/summarize.py --stages target/stages connector-scala/target/test-reports \
	    connector-scala/target/spark-3.5_2.12/test-reports target/mutations/junit target/pytest; \
	  exit $$status

# Every suite on Spark 3.5 / Scala 2.12 (make test runs SPARK35_SUITES), Scala and Python.
test-spark35: setup
	$(SBT) connectorSpark35/assembly connectorSpark35/publishM2 connectorSpark35/test
	@$(MAKE) -s python-package PYTHON=.venv-spark3.5/bin/python
	GAZETTE_LOCAL_BINARIES=required .venv-spark3.5/bin/python -m pytest -q tests --ignore=tests/soak

# Spark 3.5 / Scala 2.13, for which no pyspark wheel exists (Spark from Maven): the build, the
# pure suites and the source's and sink's integration suites.
test-spark35-scala213: setup
	$(SBT) connectorSpark35Scala213/assembly "connectorSpark35Scala213/testOnly io.sparkgazette.message.* \
	  io.sparkgazette.client.*Suite io.sparkgazette.spark.*OptionsSuite io.sparkgazette.spark.errors.GazetteErrorsSuite \
	  io.sparkgazette.spark.source.SourceIntegrationSuite io.sparkgazette.spark.sink.SinkIntegrationSuite"

# Formatting: scalafmt (.scalafmt.conf) over the Scala sources and the build, ruff (ruff.toml)
# over the Python; `make format` rewrites what `make lint` refuses.
lint: setup
	@out="$$($(SBT) $(SCALA_FORMAT_CHECKS) 2>&1)" || { echo "$$out" | grep -E '^\[(warn|error)\]' >&2; \
	  echo "lint: scalafmt refused the Scala sources above; 'make format' rewrites them" >&2; exit 1; }
	@$(MAKE) -s lint-python

# make test runs these checks in its own sbt run, after the suites (one JVM start fewer).
SCALA_FORMAT_CHECKS := scalafmtCheckAll connectorSpark35/scalafmtCheckAll scalafmtSbtCheck

lint-python: setup
	@$(PYTHON) -m ruff check -q python tests docker
	@$(PYTHON) -m ruff check -q --target-version py39 --select E9 python/spark_gazette  # requires-python
	@$(PYTHON) -m ruff format -q --check python tests docker

format: setup
	@$(SBT) scalafmtAll connectorSpark35/scalafmtAll scalafmtSbt >/dev/null
	@$(PYTHON) -m ruff check -q --fix python tests docker
	@$(PYTHON) -m ruff format -q python tests docker

# docs/options.md and the error conditions of docs/operations.md, generated from the code
# (options.json, GazetteErrors.conditions); ReferenceDocsSuite fails when they differ.
options-doc: setup
	@$(SBT) "connector/Test/runMain io.sparkgazette.spark.ReferenceDocs"

test-scala: setup
	$(SBT) test

test-python: setup
	$(SBT) connector/assembly connector/publishM2
	$(MAKE) -s python-package
	GAZETTE_LOCAL_BINARIES=required GAZETTE_NETWORK_FAULTS=required $(PYTHON) -m pytest -q tests --ignore=tests/soak

# A backfill of journals persisted in an S3 store (the harness's local server), read from the store
# against through the broker, and one large journal read committed by several tasks against one
# (BENCH_ARGS="--journals 8 --mib 512 --codec GZIP --split-mib 1024").
bench-backfill: jar
	@$(LINE_PYTHON) tests/bench/bench_backfill.py $(BENCH_ARGS)

# Exactly-once writes of the sink against Gazette's Go Publisher, and the read cost of its output
# (BENCH_ARGS="--rows 1000000").
bench-sink: jar
	@$(LINE_PYTHON) tests/bench/bench_sink.py $(BENCH_ARGS)

# The sink over 1,000 epochs: each row once, the driver's descriptors and threads flat (the
# normal suite runs 40).
test-sink-long: setup
	SINK_EPOCHS=1000 $(SBT) "testOnly io.sparkgazette.spark.sink.SinkEpochsIntegrationSuite"

# The fragment-store suites whole: every codec read straight from each store (S3 on MinIO, GCS on
# fake-gcs-server, Azure on Azurite, as brokers sign for them), split read-committed batches,
# failing, throttling and refusing stores, a URL expired before its task fetched it (Azure),
# judged by Gazette's reader. `make test` runs their short versions. About 7 minutes (13 compiling first).
STORE_SUITES := io.sparkgazette.spark.source.SourceStoreIntegrationSuite \
  io.sparkgazette.spark.source.SourceGcsStoreIntegrationSuite io.sparkgazette.spark.source.SourceAzureStoreIntegrationSuite
test-stores: jar
	SPARKGAZETTE_STORES=whole $(SBT) "connector/testOnly $(STORE_SUITES)"
	GAZETTE_LOCAL_BINARIES=required $(PYTHON) -m pytest -q tests/harness/test_store.py

# A blocking Read of an idle journal held for 3.5 minutes, past the brokers' limit on keepalive
# pings (IdleReadIntegrationSuite; minutes long, so not part of `make test`).
test-idle-reads: setup
	IDLE_READ_SECONDS=210 $(SBT) "connector/testOnly io.sparkgazette.client.IdleReadIntegrationSuite"

# Queries that outlive their bearer tokens (tests/tokens/tokens.py): five minutes each of a stream
# in micro-batches and in real time on a token file, and in micro-batches on a provider class,
# tokens living 30 s, the brokers' key rotated midway, then a batch write and read; judged by
# Gazette's reader (make test runs tests/tokens/test_tokens.py: 30 s streams, no rotation).
test-tokens: jar
	GAZETTE_LOCAL_BINARIES=required $(LINE_PYTHON) -m pytest -q tests/tokens/test_tokens.py
	$(LINE_PYTHON) tests/tokens/tokens.py --minutes 5 --ttl 30
	$(LINE_PYTHON) tests/tokens/tokens.py --minutes 5 --ttl 30 --real-time
	$(LINE_PYTHON) tests/tokens/tokens.py --minutes 5 --ttl 30 --provider

# The Python suites on the oldest supported pyspark (python/requirements-compat.txt), in
# .venv-compat, against the same jar as `make test` (which runs them on requirements-dev.txt's).
test-compat: setup
	@build/setup.sh --compat
	$(SBT) connector/assembly connector/publishM2
	@$(MAKE) -s python-package PYTHON=.venv-compat/bin/python
	.venv-compat/bin/python -m pytest -q tests --ignore=tests/chaos --ignore=tests/soak

# The real-time suites of Python (helpers, demo, a short chaos run) on the oldest pyspark with
# `trigger(realTime=...)` (python/requirements-compat-real-time.txt), in .venv-compat-real-time.
test-compat-real-time: setup
	@build/setup.sh --compat-real-time
	$(SBT) connector/assembly
	@$(MAKE) -s python-package PYTHON=.venv-compat-real-time/bin/python
	.venv-compat-real-time/bin/python -m pytest -q tests/test_real_time.py tests/test_demo.py \
		tests/chaos/test_chaos.py -k "real_time"

# The Python suites inside docker-compose (etcd, broker, journals, Spark runner) through
# testcontainers; installs Docker, Compose v2 and base images where they are missing. Not part of
# `make test`. PYTEST_ARGS="-q tests/harness/test_broker.py" runs some suites only.
test-compose:
	@GAZETTE_COMPOSE=1 docker/test-compose.sh $(PYTEST_ARGS)

# The main job: events in Gazette, rolled up per user and minute by PySpark, exactly once.
# DEMO_ARGS=--short for a quick run, --real-time for a stateless pipeline in real-time mode with
# its latencies; Ctrl-C stops everything cleanly.
demo: setup-demo
	$(build_jar)
	@$(LINE_PYTHON) python/examples/rollups.py $(DEMO_ARGS)

# The README's Quick start, as written: a local cluster whose broker listens on 127.0.0.1:8080
# (QUICKSTART_PORT), with the journals events/ (sample purchase events) and rollups/, left running
# for a session in .venv/bin/python (the package and its jar installed); `make cluster-down` stops it.
QUICKSTART_PORT ?= 8080
quickstart: setup-demo
	$(build_jar)
	@$(LINE_PYTHON) tests/harness/cluster.py up --port $(QUICKSTART_PORT) >/dev/null
	@$(LINE_PYTHON) tests/harness/quickstart.py

# The connector's shaded jar for SPARK's line, built and installed (inside the Python package) into
# that line's virtualenv: what every target that runs Spark starts with.
define build_jar
	@mkdir -p target && $(SBT) $(LINE)/assembly >target/jar.log 2>&1 || { tail -40 target/jar.log >&2; exit 1; }
	@$(MAKE) -s python-package PYTHON=$(LINE_PYTHON)
endef
jar: setup
	$(build_jar)

# The same, saying its path (the last line printed).
assembly: jar
	@ls $(if $(filter 3.5,$(SPARK)),$(JAR_SPARK35),$(JAR))

# The Python package with the assembly jars built so far inside, each under its artifact's name
# (spark_gazette picks the one for the installed Spark), installed into $(PYTHON)'s virtualenv.
python-package:
	@rm -rf python/build python/spark_gazette/jars && mkdir -p python/spark_gazette/jars
	@for built in "$(JAR):spark-gazette_2.13" "$(JAR_SPARK35):spark-gazette-3.5_2.12" \
	    "$(JAR_SPARK35_SCALA213):spark-gazette-3.5_2.13"; do \
	  [ ! -f "$${built%%:*}" ] || cp "$${built%%:*}" "python/spark_gazette/jars/$${built##*:}-$(VERSION).jar"; done
	@$(PYTHON) -m pip install -q --no-deps --force-reinstall ./python >&2

# Each line's assembly and a dependency-free POM into ~/.m2, for `spark-submit --packages
# io.sparkgazette:spark-gazette_2.13:$(VERSION)` (Spark 4), `spark-gazette-3.5_2.12` or `spark-gazette-3.5_2.13`.
publish-local: setup
	$(SBT) connector/publishM2 connectorSpark35/publishM2 connectorSpark35Scala213/publishM2

# A release in target/dist/: maven/ holds each line's shaded jar, its sources and javadoc jars and
# a dependency-free POM in Maven's layout (with checksums; signing is the release's job), and the
# wheel carries the same jars.
dist: setup
	@rm -rf target/dist
	@RELEASE=1 $(SBT) connector/assembly connector/publish connectorSpark35/assembly connectorSpark35/publish \
	  connectorSpark35Scala213/assembly connectorSpark35Scala213/publish >&2
	@$(MAKE) -s python-package
	@rm -rf python/build && $(PYTHON) -m pip wheel -q --no-deps -w target/dist ./python >&2
	@find target/dist -type f \( -name '*.jar' -o -name '*.pom' -o -name '*.whl' \) | sort

# What bench-latency's real-time runs measure the connector against, Spark's Kafka connector in
# real-time mode, needs beside the rest: Kafka's broker and Spark's Kafka jars, and pyspark 4.2.x
# (the newest Spark that Maven serves Spark's Kafka connector for) in .venv-bench-kafka, where
# both pipelines run, with the connector's package. Only the benchmarks install it.
BENCH_KAFKA_PYTHON := .venv-bench-kafka/bin/python
setup-bench-kafka: jar
	@build/setup.sh --bench-kafka
	@$(MAKE) -s python-package PYTHON=$(BENCH_KAFKA_PYTHON)

# Every benchmark below, one after the other, then one table of their ratios and results
# (BENCH_ARGS="--tiny" for a quick run, "--only sink,latency" for some).
bench: jar setup-bench-kafka
	@$(LINE_PYTHON) tests/bench/run_all.py $(BENCH_ARGS)

# Every benchmark once on a few rows, as a test: do they still run? (`make test` runs `source` only.)
# And Spark's Kafka connector's side of bench-latency: its broker starts and a few messages are timed.
bench-tiny: jar setup-bench-kafka
	GAZETTE_LOCAL_BINARIES=required $(LINE_PYTHON) -m pytest -q tests/bench/test_benchmarks.py \
	  tests/bench/check_kafka_latency.py

# Read-committed throughput of the source against Gazette's Go reader (BENCH_ARGS="--mib 1024").
bench-source: jar
	@$(LINE_PYTHON) tests/bench/bench_source.py $(BENCH_ARGS)

# The client's raw read against Gazette's Go reader, below framing and rows (BENCH_ARGS="--mib 1024").
bench-client: setup
	@$(PYTHON) tests/bench/bench_client.py $(BENCH_ARGS)

# The source over many journals, one small message each per batch: the driver's cost per trigger,
# the batch end to end, and checkpoint files per batch (BENCH_ARGS="--journals 10000").
bench-journals: jar
	@$(LINE_PYTHON) tests/bench/bench_journals.py $(BENCH_ARGS)

# The source's latency from an append to its row in a foreachBatch, default trigger, over 100
# journals with steady traffic (BENCH_ARGS="--journals 10 --rate 70"); BENCH_ARGS="--real-time
# --journals 10,100" adds real-time mode: to a foreach writer, and Gazette -> Spark -> Gazette
# beside Kafka -> Spark -> Kafka (Spark's Kafka connector), both on pyspark 4.2.x in
# .venv-bench-kafka (--no-kafka: ours alone, on SPARK's line).
BENCH_LATENCY_KAFKA := $(if $(findstring --no-kafka,$(BENCH_ARGS)),,$(findstring real-time,$(BENCH_ARGS))$(findstring --only-kafka,$(BENCH_ARGS)))
bench-latency: jar
ifneq ($(BENCH_LATENCY_KAFKA),)
	@$(MAKE) -s setup-bench-kafka
	@$(BENCH_KAFKA_PYTHON) tests/bench/bench_latency.py $(BENCH_ARGS)
else
	@$(LINE_PYTHON) tests/bench/bench_latency.py $(BENCH_ARGS)
endif

# Protobuf decoding: the connector's JVM decoder against its Python twin and from_json (BENCH_ARGS="--rows 1000000").
bench-decode: jar
	@$(LINE_PYTHON) tests/bench/bench_decode.py $(BENCH_ARGS)

# The pipeline at a steady rate for an hour (Go Publisher -> source -> exactly-once sink) on a Spark
# standalone cluster: heap, threads, descriptors and checkpoint sampled every 5 minutes, then
# judged by Gazette's reader (SOAK_MINUTES=60, SOAK_RATE=bytes/s, SOAK_ARGS="--local").
soak: jar
	@$(LINE_PYTHON) tests/soak/soak.py $(SOAK_ARGS)

# The source's random schedules, judged by Gazette's reader: `make test` runs 80; SCHEDULES=5000
# by hand, SEED=S to replay the group a failure names.
SCHEDULES ?= 5000
test-source-properties: setup
	SPARKGAZETTE_SCHEDULES=$(SCHEDULES) $(if $(SEED),SPARKGAZETTE_SEED=$(SEED)) $(SBT) "testOnly io.sparkgazette.spark.source.SourcePropertyIntegrationSuite"

# Shows that the suites bite: each one-line mutation of the connector in tests/mutations/mutations.py
# (a dropped duplicate check, a rollback taken for a commit, ...) applied alone to a copy of the tree
# under target/mutations must fail the suites named for it. MUTATIONS=name,name runs some. `make
# test` runs a sample of about MUTATIONS_SAMPLE of them, the group MUTATIONS_SEED picks (drawn at
# random and printed when not given; consecutive seeds cover the list).
MUTATIONS_SAMPLE ?= 4
test-mutations: setup
	@$(if $(MUTATIONS),MUTATIONS=$(MUTATIONS)) $(PYTHON) tests/mutations/run.py

# The pipeline under random SIGKILLs of its driver, executors and brokers, judged by Gazette's
# reader (tests/chaos/chaos.py): CHAOS_CYCLES kills, CHAOS_SEED=S to replay a schedule, CHAOS_ARGS
# for more of its flags (`--minutes M`, `--keep`, ...). `make chaos-real-time` runs the query in Spark's
# real-time mode (`CHAOS_ARGS=--real-time`). `make test` runs the short versions (`pytest tests/chaos`): micro-batches on Spark 3.5, real time on 4.3.
CHAOS_CYCLES ?= 100
CHAOS_ARGS ?=
chaos: jar
	@CHAOS_CYCLES=$(CHAOS_CYCLES) $(if $(CHAOS_SEED),CHAOS_SEED=$(CHAOS_SEED)) $(LINE_PYTHON) tests/chaos/chaos.py $(CHAOS_ARGS)

chaos-real-time: override CHAOS_ARGS += --real-time
chaos-real-time: chaos

# Each chaos run (chaos, chaos-real-time, chaos-network) appends its tally to tests/chaos/ledger.md
# (`--no-ledger` leaves a run out); this prints the totals per kind of run, failing if any run lost,
# duplicated or invented a message.
chaos-ledger:
	@$(PYTHON) tests/chaos/ledger.py

# The pipeline under network faults (tests/chaos/network_chaos.py): etcd, three brokers and Spark
# each in a network namespace, partitions by nftables and latency, bandwidth caps, resets and
# blackholes by toxiproxy, at random moments and for random lengths, some with a kill of the driver,
# an executor or a broker, and faults of the fragment store (MinIO) under a history read; judged by
# Gazette's reader. Needs root. CHAOS_NETWORK_CYCLES faults (200),
# CHAOS_SEED=S to replay a schedule, CHAOS_NETWORK_ARGS for more of its flags (`--faults
# reset,latency`, `--kill-share 0`, `--long-share F`, `--real-time`, `--minutes M`, `--keep`).
# `make chaos-network-short` is the harness's own test and a few cycles in micro-batches, in real
# time and of the store's faults (tests/chaos/test_network_chaos.py, about four minutes each);
# `make test` runs the harness test and the micro-batch one.
CHAOS_NETWORK_CYCLES ?= 200
CHAOS_NETWORK_ARGS ?=
chaos-network: jar
	@$(LINE_PYTHON) tests/chaos/network_chaos.py --cycles $(CHAOS_NETWORK_CYCLES) \
	  $(if $(CHAOS_SEED),--seed $(CHAOS_SEED)) $(CHAOS_NETWORK_ARGS)

chaos-network-short: jar
	$(if $(CHAOS_SEED),CHAOS_SEED=$(CHAOS_SEED)) GAZETTE_LOCAL_BINARIES=required GAZETTE_NETWORK_FAULTS=required $(LINE_PYTHON) -m pytest -q \
	  tests/harness/test_network.py tests/chaos/test_network_chaos.py

cluster-up: setup
	@$(PYTHON) tests/harness/cluster.py up --brokers $(BROKERS) --store $(STORE) --specs tests/specs/examples.yaml
	@echo "(written to .cluster/env; stop it with: make cluster-down)"

cluster-down:
	@python3 tests/harness/cluster.py down

clean:
	rm -rf target connector-scala/target project/target project/project .cluster
