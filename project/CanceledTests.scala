import sbt._
import sbt.testing.Status

/** Names the tests a suite canceled (`assume`, `cancel`) in `canceled.txt` beside sbt's JUnit
  * reports, a `class :: test` line each: those reports write a canceled test as one that passed,
  * and `make test`'s summary (tests/harness/summarize.py) must not count it so.
  */
final class CanceledTests(reports: File) extends TestsListener {
  private val file = reports / "canceled.txt"

  override def doInit(): Unit = ()
  override def startGroup(name: String): Unit = ()
  override def testEvent(event: TestEvent): Unit =
    event.detail.filter(_.status == Status.Canceled).foreach { e =>
      val name = e.selector match {
        case s: sbt.testing.TestSelector => s.testName
        case s: sbt.testing.NestedTestSelector => s.testName
        case other => other.toString
      }
      IO.append(file, s"${e.fullyQualifiedName} :: $name\n")
    }
  override def endGroup(name: String, t: Throwable): Unit = ()
  override def endGroup(name: String, result: TestResult): Unit = ()
  override def doComplete(finalResult: TestResult): Unit = ()
}
