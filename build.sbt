// The Gazette connector for Spark Structured Streaming.
//
// One source tree, `connector-scala`, whose packages are layered:
//   io.sparkgazette.client  -> Gazette's broker protocol over gRPC (no Spark)
//   io.sparkgazette.message -> message semantics: UUIDs, framings, sequencing (no gRPC, no Spark)
//   io.sparkgazette.spark   -> the DataSource V2 source and sink
// built once per Spark line (see `SparkLine` below). Spark and Scala come from the runtime;
// gRPC, protobuf and ScalaPB are bundled and relocated into each assembly jar.

ThisBuild / organization := "io.sparkgazette"
// The one version number of a release, jar and wheel alike: the Python package's, in python/pyproject.toml.
ThisBuild / version := {
  val pyproject = IO.read((ThisBuild / baseDirectory).value / "python" / "pyproject.toml")
  """(?m)^version\s*=\s*"([^"]+)"""".r.findFirstMatchIn(pyproject).map(_.group(1))
    .getOrElse(sys.error("python/pyproject.toml has no version = \"...\" line"))
}
ThisBuild / scalaVersion := "2.13.18"
val Scala212 = "2.12.18" // Spark 3.5's own
ThisBuild / versionScheme := Some("early-semver")
// What Maven Central requires of a POM besides coordinates.
ThisBuild / description := "Spark Structured Streaming source and sink for Gazette journals, exactly-once"
ThisBuild / homepage := Some(url("https://github.com/sparkgazette/spark-gazette"))
ThisBuild / licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0.txt"))
ThisBuild / scmInfo := Some(ScmInfo(url("https://github.com/sparkgazette/spark-gazette"),
    "scm:git:https://github.com/sparkgazette/spark-gazette.git"))
ThisBuild / developers := List(Developer("sparkgazette", "The spark-gazette authors", "dev@sparkgazette.io",
    url("https://github.com/sparkgazette")))
// Unused imports are errors in our sources (not in the generated protocol classes).
ThisBuild / scalacOptions ++= Seq(
  "-deprecation",
  "-feature",
  "-unchecked",
  "-Xlint:-unused,_",
  "-Wconf:cat=unused-imports&src=src_managed/.*:s,cat=unused-imports:e"
)

val grpcVersion = "1.84.0"
// Native libraries of grpc-netty-shaded are named for its package (io.grpc.netty.shaded.io.netty).
val GrpcNettyNative = "libio_grpc_netty_shaded_"
val ShadedPrefix = "io_sparkgazette_shaded_"
val protobufVersion = "3.25.8"

// Spark's own JVM module flags: spark-submit adds them, forked test JVMs need them too.
val sparkJavaOptions = Seq(
  "-XX:+IgnoreUnrecognizedVMOptions",
  "--add-opens=java.base/java.lang=ALL-UNNAMED",
  "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
  "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
  "--add-opens=java.base/java.io=ALL-UNNAMED",
  "--add-opens=java.base/java.net=ALL-UNNAMED",
  "--add-opens=java.base/java.nio=ALL-UNNAMED",
  "--add-opens=java.base/java.util=ALL-UNNAMED",
  "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
  "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
  "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
  "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
  "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
  "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
  "-Dio.netty.tryReflectionSetAccessible=true"
)

def pysparkJars(base: File, venv: String): Seq[File] =
  ((base / venv / "lib") * "python3*" / "site-packages" / "pyspark" / "jars" * "*.jar").get

lazy val root = (project in file("."))
  .aggregate(connector)
  .settings(publish / skip := true)

// Spark 4.0 to 4.3, Scala 2.13: `make test` runs every suite on it.
lazy val connector = (project in file("connector-scala"))
  .settings(connectorSettings("spark-gazette", "2.13.18", "spark-4", jvmRelease = "17", venv = Some(".venv")))

// Spark 3.5, Scala 2.12 and 2.13: the same sources but the 3.5 shims, built into their own target
// folders; `make test` runs the Go-judged suites on 2.12.
lazy val connectorSpark35 = (project in file("connector-scala"))
  .settings(
    connectorSettings("spark-gazette-3.5", Scala212, "spark-3.5", jvmRelease = "11", venv = Some(".venv-spark3.5")),
    target := baseDirectory.value / "target" / "spark-3.5_2.12",
    // make test runs the source's random schedules on Spark 4 (80); here a shorter run of them.
    Test / envVars += "SPARKGAZETTE_SCHEDULES" -> sys.env.getOrElse("SPARKGAZETTE_SCHEDULES", "40")
  )
// Spark 3.5's Scala 2.13 library is 2.13.8; its dependencies here (ScalaPB, scalatest) need 2.13.16 or
// newer, which sbt enforces (SIP-51), so this line is compiled with 2.13.18 like Spark 4's.
lazy val connectorSpark35Scala213 = (project in file("connector-scala"))
  .settings(
    connectorSettings("spark-gazette-3.5", "2.13.18", "spark-3.5", jvmRelease = "11", sparkFromMaven = Some("3.5.9")),
    target := baseDirectory.value / "target" / "spark-3.5_2.13"
  )

/** The connector for one Spark line: its artifact, its Scala, the folder of the sources that
  * differ in it (`src/main/<shims>`, `src/test/<shims>`: a few lines each, all else shared), the
  * JVM bytecode it targets, and where its Spark comes from: the jars of a pyspark in a virtualenv
  * (made by `make setup`: the very jars the Python tests run on, downloaded once) or, for a line
  * no pyspark wheel carries, Maven. Spark is never bundled.
  */
def connectorSettings(module: String, scalaV: String, shims: String, jvmRelease: String,
    venv: Option[String] = None, sparkFromMaven: Option[String] = None): Seq[Setting[_]] =
  addArtifact(Compile / assembly / artifact, assembly) ++ Seq(
    name := module,
    moduleName := module, // as is: sbt would make 3.5 into 3-5
    scalaVersion := scalaV,
    scalacOptions ++= Seq("-release", jvmRelease,
      if (scalaBinaryVersion.value == "2.12") "-Ywarn-unused:imports" else "-Wunused:imports"),
    javacOptions ++= Seq("--release", jvmRelease),
    Compile / unmanagedSourceDirectories += baseDirectory.value / "src" / "main" / shims,
    Test / unmanagedSourceDirectories += baseDirectory.value / "src" / "test" / shims,
    // The options' Scala names, from their one declaration (options.json).
    Compile / sourceGenerators += Def.task {
      OptionNames.generate(baseDirectory.value / OptionNames.Declaration,
        (Compile / sourceManaged).value / "options" / "OptionNames.scala")
    }.taskValue,
    Compile / PB.protoSources := Seq((ThisBuild / baseDirectory).value / "protos"),
    Compile / PB.targets := Seq(
      scalapb.gen(grpc = true, flatPackage = true) -> (Compile / sourceManaged).value / "scalapb"
    ),
    PB.protocVersion := protobufVersion,
    libraryDependencies ++= Seq(
      "com.thesamet.scalapb" %% "scalapb-runtime" % scalapb.compiler.Version.scalapbVersion % "protobuf",
      "com.thesamet.scalapb" %% "scalapb-runtime-grpc" % scalapb.compiler.Version.scalapbVersion,
      "com.google.protobuf" % "protobuf-java" % protobufVersion,
      "io.grpc" % "grpc-netty-shaded" % grpcVersion,
      "io.grpc" % "grpc-stub" % grpcVersion,
      "io.grpc" % "grpc-protobuf" % grpcVersion,
      // Provided by Spark at run time.
      "org.xerial.snappy" % "snappy-java" % "1.1.10.8" % Provided,
      "org.slf4j" % "slf4j-api" % "2.0.17" % Provided,
      "com.github.luben" % "zstd-jni" % "1.5.7-7" % Provided,
      "org.scalatest" %% "scalatest" % "3.2.20" % Test,
      "org.scalatestplus" %% "scalacheck-1-18" % "3.2.19.0" % Test,
      "org.slf4j" % "slf4j-simple" % "2.0.17" % Test
    ) ++ sparkFromMaven.toSeq.map(v => "org.apache.spark" %% "spark-sql" % v % Provided),
    Compile / unmanagedJars ++= Attributed.blankSeq(
      venv.toSeq.flatMap(v => pysparkJars((ThisBuild / baseDirectory).value, v))),
    // The suites run the connector unshaded: its gRPC needs a newer Guava than Spark 3.5 ships (14).
    Test / fullClasspath := {
      val (spark, ours) = (Test / fullClasspath).value.partition(_.data.getPath.contains("/pyspark/jars/"))
      ours ++ spark
    },
    assembly / assemblyExcludedJars := (assembly / fullClasspath).value.filter(
      _.data.getPath.contains("/pyspark/jars/")),
    Test / fork := true,
    Test / javaOptions ++= sparkJavaOptions ++ Seq(
      s"-Dsparkgazette.root=${(ThisBuild / baseDirectory).value}",
      "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"
    ),
    // The store suites' cloud hosts (storage.googleapis.com, <account>.blob.core.windows.net) name
    // their emulators through the test JVM's own hosts file, the machine's to begin with, to which
    // LocalCluster adds a cluster's emulator. Each cluster's emulator has an address of its own, so
    // names are looked up anew each time.
    Test / javaOptions ++= {
      val hosts = target.value / "test-hosts"
      val name = scala.util.Try(scala.sys.process.Process("hostname").!!.trim).getOrElse("")
      IO.write(hosts, IO.read(file("/etc/hosts")) + s"\n127.0.0.1 localhost $name\n")
      Seq(s"-Djdk.net.hosts.file=$hosts", "-Dsun.net.inetaddr.ttl=0")
    },
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    Test / testListeners += new CanceledTests(target.value / "test-reports"),
    Test / parallelExecution := false,
    assembly / assemblyJarName := s"${name.value}-assembly-${version.value}.jar",
    // What `publishM2` publishes is the shaded assembly, with a POM that lists no dependencies:
    // everything the connector needs is inside it or comes with Spark.
    Compile / packageBin / publishArtifact := false,
    // Maven Central wants sources and javadoc jars next to the jar: `make dist` (RELEASE=1) builds
    // them; scaladoc would add most of a minute to every test run's publishM2. The docs cover our
    // own sources, not the generated protocol classes.
    Compile / packageDoc / publishArtifact := sys.env.get("RELEASE").contains("1"),
    Compile / packageSrc / publishArtifact := sys.env.get("RELEASE").contains("1"),
    Test / publishArtifact := false,
    // Our own sources only, against the compiled protocol classes: scaladoc of the generated code
    // would take a minute on every publish.
    Compile / doc / sources := (Compile / doc / sources).value.filterNot(_.getPath.contains("src_managed")),
    Compile / doc / dependencyClasspath := (Compile / fullClasspath).value,
    Compile / doc / scalacOptions := Seq("-no-link-warnings"),
    // `make dist` publishes here, in Maven's layout with checksums: the bundle a Central release uploads.
    publishTo := Some(MavenCache("dist", (ThisBuild / baseDirectory).value / "target" / "dist" / "maven")),
    publishMavenStyle := true,
    // A release version is published again by every build (make test, make dist): the newest wins.
    publishM2Configuration := publishM2Configuration.value.withOverwrite(true),
    publishConfiguration := publishConfiguration.value.withOverwrite(true),
    Compile / assembly / artifact := (Compile / assembly / artifact).value.withClassifier(None),
    pomPostProcess := { node =>
      import scala.xml.{Node => XNode, NodeSeq}
      import scala.xml.transform.{RewriteRule, RuleTransformer}
      new RuleTransformer(new RewriteRule {
        override def transform(n: XNode): Seq[XNode] = if (n.label == "dependencies") NodeSeq.Empty else n
      }).transform(node).head
    },
    assembly / assemblyOption ~= (_.withIncludeScala(false)),
    assembly / test := {},
    // Everything bundled that Spark or a user's other jars might also carry moves under our
    // own package, so that no version of theirs meets a version of ours.
    assembly / assemblyShadeRules :=
      (Seq(
        "io.grpc",
        "com.google.protobuf",
        "scalapb",
        "com.google.common",
        "com.google.thirdparty",
        "com.google.gson",
        "io.perfmark",
        "com.google.api",
        "com.google.rpc",
        "com.google.type",
        "com.google.longrunning",
        "com.google.cloud",
        "com.google.geo",
        "com.google.logging",
        "com.google.apps",
        "com.google.shopping",
        "android.annotation",
        "org.codehaus.mojo.animal_sniffer",
        "scala.collection.compat",
        "com.google.errorprone",
        "com.google.j2objc",
        "javax.annotation",
        "org.checkerframework",
        "org.jspecify",
        "scala.util.control.compat",
        "scala.util.matching.compat"
        // On Scala 2.12 scala-collection-compat brings scala.jdk (2.13's own library has it).
      ) ++ (if (scalaBinaryVersion.value == "2.12") Seq("scala.jdk") else Nil)).map(p =>
        ShadeRule.rename(s"$p.**" -> s"io.sparkgazette.shaded.$p.@1").inAll) ++
        // ... and classes into 2.12's own packages, which would meet those of a user's Scala library.
        (if (scalaBinaryVersion.value != "2.12") Nil
         else
           Seq("scala.util.Using", "scala.util.Chaining", "scala.util.chaining", "scala.annotation.unused").map(c =>
             ShadeRule.rename(s"$c**" -> s"io.sparkgazette.shaded.$c@1").inAll)),
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "services", _*) => MergeStrategy.filterDistinctLines
      case x if x.endsWith("module-info.class") => MergeStrategy.discard
      case PathList("META-INF", "io.netty.versions.properties") => MergeStrategy.first
      // netty loads its epoll transport by a library name that follows netty's package, which moved
      // under ours: the library moves with it, or gRPC falls back to the JDK's NIO transport.
      case PathList("META-INF", "native", lib)
          if lib.startsWith(GrpcNettyNative) && lib.contains("transport_native_epoll") =>
        CustomMergeStrategy.rename(_ =>
          s"META-INF/native/lib${ShadedPrefix}io_grpc_netty_shaded_${lib.stripPrefix(GrpcNettyNative)}")
      case x if x.endsWith(".proto") => MergeStrategy.discard
      case "scala-collection-compat.properties" => MergeStrategy.discard
      case x => (assembly / assemblyMergeStrategy).value(x)
    }
  )
