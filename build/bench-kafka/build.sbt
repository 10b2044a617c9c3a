// What `bench-latency --real-time` needs to run Spark's Kafka connector beside ours
// (build/setup.sh --bench-kafka resolves it, nothing else uses it): Kafka's broker, started as a
// JVM of its own in KRaft mode, and Spark's Kafka source and sink for the pyspark of
// python/requirements-bench-kafka.txt. No code: `export <project>/Runtime/fullClasspath` prints
// each classpath from Coursier's cache.
val brokerVersion = "4.1.1"
val sparkVersion = "4.2.0" // for pyspark 4.2.x (python/requirements-bench-kafka.txt; Maven serves no 4.2.1)

ThisBuild / scalaVersion := "2.13.18"

// Kafka's broker (Scala 2.13), with the Log4j 2 backend its scripts put on the classpath.
lazy val broker = project.settings(
  autoScalaLibrary := false,
  libraryDependencies ++= Seq(
    "org.apache.kafka" % "kafka_2.13" % brokerVersion,
    "org.apache.logging.log4j" % "log4j-slf4j2-impl" % "2.24.3",
    "org.apache.logging.log4j" % "log4j-core" % "2.24.3"
  )
)

// Spark's Kafka source and sink at the versions of their POM, without what pyspark already ships
// (Spark, Scala, the compression codecs, SLF4J).
lazy val sparkKafka = project.settings(
  autoScalaLibrary := false,
  libraryDependencies ++= Seq(
    ("org.apache.spark" % "spark-sql-kafka-0-10_2.13" % sparkVersion).intransitive(),
    ("org.apache.spark" % "spark-token-provider-kafka-0-10_2.13" % sparkVersion).intransitive(),
    ("org.apache.kafka" % "kafka-clients" % "3.9.2").intransitive(),
    ("org.apache.commons" % "commons-pool2" % "2.13.1").intransitive()
  )
)
