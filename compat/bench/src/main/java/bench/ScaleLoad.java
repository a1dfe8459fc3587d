package bench;

import static bench.Driver.emit;
import static bench.Driver.num;
import static bench.Driver.q;
import static bench.Driver.str;
import static bench.Driver.dbl;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

/**
 * Many topics and queues (--mode topics): creates --topics T topics of --queues Q queues each (UPDATE_AND_CREATE_TOPIC
 * from --createThreads threads, each topic waited for until the nameserver routes it), sends one message to every
 * topic (the producer learns each route), then each run sends --size bytes from --threads sync senders, every send to
 * the next topic round-robin (the client picks the topic's queue round-robin).
 *
 * Events: phase/phase-end "create" (durationMs: all topics created and routable), then as --mode send.
 */
final class ScaleLoad {
  private ScaleLoad() {}

  static void run() throws Exception {
    String prefix = str("topic", "BenchTopics");
    int topics = num("topics", 2000);
    int queues = num("queues", 8);
    int size = num("size", 1024);
    DefaultMQProducer p = Driver.producer();
    String[] names = new String[topics];
    for (int i = 0; i < topics; i++) names[i] = prefix + "_" + i;

    emit("{\"event\":\"phase\",\"name\":\"create\",\"count\":" + topics + "}");
    long cs = System.nanoTime();
    AtomicInteger next = new AtomicInteger();
    LongAdder created = new LongAdder();
    LongAdder failed = new LongAdder();
    String[] lastError = {null};
    Thread prog = Driver.progress("create", created, failed, cs);
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < num("createThreads", 8); t++) {
      Thread th = new Thread(() -> {
        for (int i; (i = next.getAndIncrement()) < topics; ) {
          try {
            Driver.ensureTopic(p, names[i], queues);
            created.increment();
          } catch (Exception e) {
            failed.increment();
            lastError[0] = e.toString();
          }
        }
      });
      th.start();
      ts.add(th);
    }
    for (Thread th : ts) th.join();
    prog.interrupt();
    emit("{\"event\":\"phase-end\",\"name\":\"create\",\"count\":" + created.sum() + ",\"errors\":" + failed.sum()
        + ",\"durationMs\":" + (System.nanoTime() - cs) / 1_000_000
        + (lastError[0] != null ? ",\"lastError\":" + q(lastError[0]) : "") + "}");
    if (failed.sum() > 0) throw new IllegalStateException(failed.sum() + " topics could not be created: " + lastError[0]);

    byte[] body = Driver.randomBody(size);
    emit("{\"event\":\"warmup-start\"}");
    for (String name : names) p.send(new Message(name, body));
    AtomicLong rr = new AtomicLong();
    int warmup = num("warmup", 3);
    if (warmup > 0) roundRobin(p, names, body, warmup * 1000L, rr, "warmup");
    int runs = num("runs", 3);
    long ms = Math.round(dbl("seconds", 5) * 1000);
    for (int r = 1; r <= runs; r++) {
      emit("{\"event\":\"run-start\",\"run\":" + r + "}");
      String res = roundRobin(p, names, body, ms, rr, "run " + r);
      emit("{\"event\":\"run-end\",\"run\":" + r + ",\"result\":" + res + "}");
    }
    p.shutdown();
  }

  static String roundRobin(DefaultMQProducer p, String[] names, byte[] body, long ms, AtomicLong rr, String label)
      throws InterruptedException {
    int threads = num("threads", 16);
    Driver.Recorder rec = new Driver.Recorder();
    LongAdder count = new LongAdder();
    LongAdder errors = new LongAdder();
    String[] lastError = {null};
    long start = System.nanoTime();
    long end = start + ms * 1_000_000L;
    Thread prog = Driver.progress(label, count, errors, start);
    List<Thread> ts = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        while (System.nanoTime() < end) {
          String topic = names[(int) (rr.getAndIncrement() % names.length)];
          try {
            long t0 = System.nanoTime();
            SendResult sr = p.send(new Message(topic, body));
            long dt = System.nanoTime() - t0;
            if (sr.getSendStatus() == SendStatus.SEND_OK) { rec.add(dt); count.increment(); }
            else { errors.increment(); lastError[0] = sr.getSendStatus().toString(); }
          } catch (Exception e) {
            errors.increment();
            lastError[0] = e.toString();
            try { Thread.sleep(10); } catch (InterruptedException ie) { return; }
          }
        }
      }, "bench-topics-" + i);
      t.start();
      ts.add(t);
    }
    for (Thread t : ts) t.join();
    prog.interrupt();
    String extra = "\"threads\":" + threads + ",\"topics\":" + names.length
        + (lastError[0] != null ? ",\"lastError\":" + q(lastError[0]) : "");
    return Driver.result(count.sum(), errors.sum(), System.nanoTime() - start, body.length, rec, extra);
  }
}
