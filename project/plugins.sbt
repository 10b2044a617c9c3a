addSbtPlugin("com.thesamet" % "sbt-protoc" % "1.0.8")
addSbtPlugin("com.eed3si9n" % "sbt-assembly" % "2.3.1")

libraryDependencies += "com.thesamet.scalapb" %% "compilerplugin" % "0.11.20"
addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.5")
