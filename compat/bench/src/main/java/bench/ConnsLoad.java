package bench;

import static bench.Driver.dbl;
import static bench.Driver.emit;
import static bench.Driver.num;
import static bench.Driver.q;
import static bench.Driver.str;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Many client connections at a steady rate (--mode conns): --producers P and --consumers C stock clients, each its
 * own MQClientInstance (its own connections to the nameserver and the broker), plus --idle I idle producers (see
 * IdleClients: a connection to each server, heartbeats and route lookups every 30 s as a stock producer sends them). The producers together send --rate msg/s of --size bytes (each paced at rate / P, one sync sender each);
 * the consumers, one group, split the topic's --queues queues. Latency: per send, and send -> delivery (nanoTime in
 * the body). Events: phase/phase-end "connect", warmup-start, run-start, run-end (count = messages sent OK;
 * delivered, e2e percentiles in the result).
 */
final class ConnsLoad {
  private ConnsLoad() {}

  static volatile int currentRun = -1;

  static void run() throws Exception {
    String topic = str("topic", "BenchConns");
    int producers = num("producers", 100);
    int consumers = num("consumers", 100);
    int idle = num("idle", 800);
    int queues = num("queues", 100);
    int size = Math.max(16, num("size", 1024));
    String group = "bench_conns_" + Driver.NONCE;

    emit("{\"event\":\"phase\",\"name\":\"connect\",\"count\":" + (producers + consumers + idle) + "}");
    long cs = System.nanoTime();
    DefaultMQProducer admin = Driver.producer();
    Driver.ensureTopic(admin, topic, queues);
    String idleTopic = topic + "_idle";
    Driver.ensureTopic(admin, idleTopic, 4);
    String brokerAddr = admin.getDefaultMQProducerImpl().getmQClientFactory().getMQClientAPIImpl()
        .getTopicRouteInfoFromNameServer(idleTopic, 3000).getBrokerDatas().get(0).selectBrokerAddr();
    admin.shutdown();

    final Driver.Recorder[] e2e = {new Driver.Recorder()};
    LongAdder[] delivered = {new LongAdder()};
    ExecutorService starter = Executors.newFixedThreadPool(8);
    List<Future<DefaultMQPushConsumer>> cf = new ArrayList<>();
    for (int i = 0; i < consumers; i++) {
      final int n = i;
      cf.add(starter.submit(() -> {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(str("namesrv", "127.0.0.1:9876"));
        c.setInstanceName("bench_cc_" + Driver.NONCE + "_" + n);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
        c.setConsumeThreadMin(2);
        c.setConsumeThreadMax(2);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
          long now = System.nanoTime();
          for (MessageExt m : msgs) {
            ByteBuffer b = ByteBuffer.wrap(m.getBody());
            if (b.getInt(8) == currentRun) {
              e2e[0].add(now - b.getLong(0));
              delivered[0].increment();
            }
          }
          return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        return c;
      }));
    }
    List<Future<DefaultMQProducer>> pf = new ArrayList<>();
    for (int i = 0; i < producers; i++) {
      final int n = i;
      pf.add(starter.submit(() -> {
        DefaultMQProducer p = Driver.producer("bench_conns_pg_" + Driver.NONCE, "bench_cp_" + Driver.NONCE + "_" + n);
        // one send: the client learns the route and connects to the broker
        for (int attempt = 1; ; attempt++) {
          try {
            p.send(new Message(topic, new byte[16]));
            return p;
          } catch (Exception e) {
            if (attempt == 5) throw e;
          }
        }
      }));
    }
    List<DefaultMQPushConsumer> cs2 = new ArrayList<>();
    for (Future<DefaultMQPushConsumer> f : cf) cs2.add(f.get(120, TimeUnit.SECONDS));
    List<DefaultMQProducer> ps = new ArrayList<>();
    for (Future<DefaultMQProducer> f : pf) ps.add(f.get(120, TimeUnit.SECONDS));
    starter.shutdown();
    IdleClients idlers = new IdleClients(idle, brokerAddr, str("namesrv", "127.0.0.1:9876"), "bench_idle_" + Driver.NONCE,
        idleTopic, num("idleIntervalMs", 30_000));
    idlers.start();
    int clients = ps.size() + cs2.size() + idle;
    emit("{\"event\":\"phase-end\",\"name\":\"connect\",\"count\":" + clients
        + ",\"durationMs\":" + (System.nanoTime() - cs) / 1_000_000 + "}");
    List<DefaultMQProducer> senders = ps;

    byte[] template = Driver.randomBody(size);
    emit("{\"event\":\"warmup-start\"}");
    long ws = System.nanoTime();
    // warm-up in 1 s rounds until a whole round is delivered (every queue has its consumer: rebalancing 100
    // consumers takes a while) and --warmup seconds passed
    for (int round = 1; ; round++) {
      currentRun = 1000 + round;
      delivered[0] = new LongAdder();
      LongAdder sent = new LongAdder();
      paced(senders, topic, template, currentRun, 1000, sent, new LongAdder(), new Driver.Recorder());
      long wait = System.nanoTime() + 2_000_000_000L;
      while (delivered[0].sum() < sent.sum() && System.nanoTime() < wait) Thread.sleep(5);
      if (sent.sum() > 0 && delivered[0].sum() >= sent.sum() && System.nanoTime() - ws >= num("warmup", 3) * 1_000_000_000L) break;
      if (System.nanoTime() - ws > 180_000_000_000L) {
        throw new IllegalStateException("warm-up: round " + round + " delivered " + delivered[0].sum() + " of " + sent.sum() + " after 180s");
      }
    }
    int runs = num("runs", 3);
    long ms = Math.round(dbl("seconds", 5) * 1000);
    for (int r = 1; r <= runs; r++) {
      e2e[0] = new Driver.Recorder();
      delivered[0] = new LongAdder();
      currentRun = r;
      emit("{\"event\":\"run-start\",\"run\":" + r + "}");
      LongAdder sent = new LongAdder();
      LongAdder errors = new LongAdder();
      Driver.Recorder sendLat = new Driver.Recorder();
      long start = System.nanoTime();
      Thread prog = Driver.progress("run " + r, sent, errors, start);
      String lastError = paced(senders, topic, template, r, ms, sent, errors, sendLat);
      long sendEnd = System.nanoTime();
      long deadline = sendEnd + TimeUnit.SECONDS.toNanos(15);
      while (delivered[0].sum() < sent.sum() && System.nanoTime() < deadline) Thread.sleep(5);
      prog.interrupt();
      long[] e = e2e[0].merged();
      String extra = "\"delivered\":" + delivered[0].sum() + ",\"rate\":" + num("rate", 5000)
          + ",\"clients\":" + clients + ",\"idleOpenConnections\":" + idlers.openConnections()
          + ",\"idleFrames\":" + idlers.sentFrames.sum()
          + ",\"e2e\":{\"n\":" + e.length + ",\"p50\":" + Driver.f3(Driver.pct(e, 0.5)) + ",\"p99\":" + Driver.f3(Driver.pct(e, 0.99))
          + ",\"max\":" + Driver.f3(e.length == 0 ? 0 : e[e.length - 1] / 1e6) + "}"
          + (lastError != null ? ",\"lastError\":" + q(lastError) : idlers.lastError != null ? ",\"lastError\":" + q(idlers.lastError) : "");
      emit("{\"event\":\"run-end\",\"run\":" + r + ",\"result\":"
          + Driver.result(sent.sum(), errors.sum(), sendEnd - start, size, sendLat, extra) + "}");
    }
    currentRun = -1;
    idlers.close();
    for (DefaultMQPushConsumer c : cs2) c.shutdown();
    for (DefaultMQProducer p : ps) p.shutdown();
  }

  /** Each sender paced at rate / senders msg/s (one thread each) for MS ms; body = nanoTime(8) run(4) padding. */
  static String paced(List<DefaultMQProducer> senders, String topic, byte[] template, int run, long ms, LongAdder sent,
      LongAdder errors, Driver.Recorder lat) throws InterruptedException {
    double rate = num("rate", 5000);
    long interval = (long) (senders.size() * 1e9 / rate);
    long start = System.nanoTime();
    long end = start + ms * 1_000_000L;
    String[] lastError = {null};
    List<Thread> ts = new ArrayList<>();
    for (int i = 0; i < senders.size(); i++) {
      final DefaultMQProducer p = senders.get(i);
      final long offset = i * interval / senders.size();
      Thread t = new Thread(() -> {
        long next = start + offset;
        while (next < end) {
          long now = System.nanoTime();
          if (now < next) {
            long sl = next - now;
            try { Thread.sleep(sl / 1_000_000, (int) (sl % 1_000_000)); } catch (InterruptedException e) { return; }
          }
          byte[] body = template.clone();
          ByteBuffer b = ByteBuffer.wrap(body);
          b.putLong(0, System.nanoTime());
          b.putInt(8, run);
          try {
            long t0 = System.nanoTime();
            if (p.send(new Message(topic, body)).getSendStatus() == SendStatus.SEND_OK) {
              lat.add(System.nanoTime() - t0);
              sent.increment();
            } else {
              errors.increment();
            }
          } catch (Exception e) {
            errors.increment();
            lastError[0] = e.toString();
          }
          next += interval;
        }
      }, "bench-conns-sender");
      t.start();
      ts.add(t);
    }
    for (Thread t : ts) t.join();
    return lastError[0];
  }
}
