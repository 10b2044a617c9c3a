package io.sparkgazette.client

import scala.concurrent.duration._

import org.scalatest.funsuite.AnyFunSuite

class StoreHealthSuite extends AnyFunSuite {
  private final class Clock { var now = 0L; def advance(d: FiniteDuration): Unit = now += d.toNanos }

  private val store = "https://bucket.s3.amazonaws.com"

  test("a store that failed is left alone for a doubling backoff, then tried by one reader at a time") {
    val clock = new Clock
    val health = new StoreHealth(() => clock.now)
    assert(
      health.admit(store).contains(0L) && health.admit(store).contains(0L), "a store nothing failed is always admitted")
    health.failed(store, "connect timed out")
    assert(health.admit(store).isEmpty)
    clock.advance(999.millis)
    assert(health.admit(store).isEmpty)
    clock.advance(1.milli)
    assert(health.admit(store).isDefined, "the backoff passed: one reader probes")
    assert(health.admit(store).isEmpty, "while it probes, the others go to brokers")
    health.failed(store, "connect timed out")
    clock.advance(1999.millis)
    assert(health.admit(store).isEmpty)
    clock.advance(1.milli)
    assert(health.admit(store).isDefined, "the second backoff is 2 s")
    health.succeeded(store)
    assert(health.admit(store).isDefined && health.admit(store).isDefined && health.outage(store).isEmpty)
  }

  test("reads that fail together, before the backoff they caused has passed, do not grow it") {
    val clock = new Clock
    val health = new StoreHealth(() => clock.now)
    (1 to 6).foreach(i => health.failed(store, s"reset #$i"))
    clock.advance(1.second)
    assert(health.admit(store).isDefined, "six reads failing at once are one failure: the backoff stays 1 s")
    assert(health.outage(store).map(_._2).contains("reset #6"))
  }

  test("the backoff stops growing at its maximum, and the outage reports since when and its last error") {
    val clock = new Clock
    val health = new StoreHealth(() => clock.now)
    (1 to 20).foreach { i => health.failed(store, s"HTTP 503 #$i"); clock.advance(1.second) }
    val (since, last) = health.outage(store).get
    assert(since == 20.seconds && last == "HTTP 503 #20")
    clock.advance(StoreHealth.MaxBackoff - 1.second)
    assert(health.admit(store).isDefined)
  }

  test("a prober that reports neither way releases the store, or loses it after the lease") {
    val clock = new Clock
    val health = new StoreHealth(() => clock.now)
    health.failed(store, "reset")
    clock.advance(1.second)
    val probe = health.admit(store).get
    health.released(store, 0L)
    assert(health.admit(store).isEmpty, "a read admitted before the outage does not release the probe")
    health.released(store, probe + 1)
    assert(health.admit(store).isEmpty, "nor does another probe's")
    health.released(store, probe)
    assert(health.admit(store).isDefined, "released by its prober: the next reader probes")
    assert(health.admit(store).isEmpty)
    clock.advance(StoreHealth.ProbeLease)
    assert(health.admit(store).isDefined, "a probe that never reported ends with its lease")
    assert(health.admit("https://other.example.com").isDefined, "stores are apart")
  }

  test("stores are keyed by where their signed URLs point and by bucket or container") {
    assert(StoreHealth.storeOf("https://b.s3.amazonaws.com/j/0-1-abc.gz?X-Amz-Signature=x") ==
      "https://b.s3.amazonaws.com")
    assert(StoreHealth.storeOf("http://127.0.0.1:9000/gazette/j/x.raw?sig") == "http://127.0.0.1:9000/gazette")
    assert(StoreHealth.storeOf("https://storage.googleapis.com/bkt/j/0-1-abc.raw?X-Goog-Signature=x") ==
      "https://storage.googleapis.com/bkt")
    assert(StoreHealth.storeOf("https://acct.blob.core.windows.net/ctr/j/0-1-abc.raw?sig=x") ==
      "https://acct.blob.core.windows.net/ctr")
  }

  test("a GCS bucket that throttles leaves other buckets' fragments to be read from their own stores") {
    // Every GCS bucket's URLs point at storage.googleapis.com, and GCS throttles (429) per bucket
    // and object: one bucket's 429 must not send the fragments of every other bucket, of any
    // project, to the brokers, nor lend its error to an outage reported for another store.
    val health = new StoreHealth(() => 0L)
    val a = StoreHealth.storeOf("https://storage.googleapis.com/bucket-a/j/0-1-abc.raw?X-Goog-Signature=x")
    val b = StoreHealth.storeOf("https://storage.googleapis.com/bucket-b/j/0-1-abc.raw?X-Goog-Signature=x")
    health.failed(a, "the fragment store answered HTTP 429 to https://storage.googleapis.com/bucket-a/j/0-1-abc.raw")
    assert(health.admit(b).contains(0L), "bucket-b is left alone because bucket-a throttled")
    assert(health.outage(b).isEmpty, s"bucket-b reported failing: ${health.outage(b)}")
  }
}
