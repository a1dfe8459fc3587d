package bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Load driver for bench/bench.mjs, using the stock RocketMQ Java client (4.9.8).
 *
 * <pre>
 * java -cp $(compat/bench/build.sh) bench.Driver --mode send|consume|e2e|probe|topics|namesrv|conns --namesrv H:P [--key value ...]
 *   common:  --topic T --queues 16 --size 1024 --warmup SECONDS --seconds SECONDS --runs N --sendTimeout MS
 *   send:    --send sync|async|batch --threads N --batch 16 (batch) --inflight 256 (async)
 *   consume: --prefill N --prefillSeconds S (backlog: N messages or what --threads senders send in S seconds;
 *            --prefillBatch B sends batches of B), then each run drains the whole backlog with a new consumer group.
 *            Filtered: --tags N gives message i the tag "t(i mod N)" and the properties k = i mod N and region;
 *            --subscribe "t0" (tag expression) or --sql "k = 0 AND ..." (SQL92) selects; a run ends when every
 *            matching message arrived. --cold: before each run print need-cold and wait for a line on stdin
 *            ("go", or "skip" to end without runs)
 *   topics / namesrv / conns: see ScaleLoad, NamesrvLoad, ConnsLoad
 *   e2e:     --rate MSG_PER_S --threads N (paced sync senders); latency = delivery - send (nanoTime in the body)
 *   probe:   prints probe-ready, waits for a line on stdin, then sends until the first SEND_OK (start-up time)
 * </pre>
 *
 * Output: one JSON object per line on stdout, each with an "event": warmup-start, run-start, progress, run-end
 * (with "result": count, errors, durationMs, throughput [msg/s], mbps [MB/s of bodies], lat {p50,p90,p99,p999,max,mean} in ms),
 * done, error.
 */
public final class Driver {
  private static final Map<String, String> OPTS = new HashMap<>();

  public static void main(String[] args) {
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (!a.startsWith("--")) die("unexpected argument " + a);
      int eq = a.indexOf('=');
      if (eq > 0) OPTS.put(a.substring(2, eq), a.substring(eq + 1));
      else if (i + 1 < args.length && !args[i + 1].startsWith("--")) OPTS.put(a.substring(2), args[++i]);
      else OPTS.put(a.substring(2), "true");
    }
    int rc = 0;
    try {
      String mode = str("mode", "send");
      switch (mode) {
        case "send": runSend(); break;
        case "consume": runConsume(); break;
        case "e2e": runE2E(); break;
        case "probe": runProbe(); break;
        case "topics": ScaleLoad.run(); break;
        case "namesrv": NamesrvLoad.run(); break;
        case "conns": ConnsLoad.run(); break;
        default: die("unknown --mode " + mode);
      }
      emit("{\"event\":\"done\"}");
    } catch (Throwable t) {
      emit("{\"event\":\"error\",\"message\":" + q(t.toString()) + "}");
      t.printStackTrace();
      rc = 1;
    }
    System.exit(rc);
  }

  // ------------------------------------------------------------------ options / output

  static String str(String k, String def) { return OPTS.getOrDefault(k, def); }
  static int num(String k, int def) { return OPTS.containsKey(k) ? Integer.parseInt(OPTS.get(k)) : def; }
  static double dbl(String k, double def) { return OPTS.containsKey(k) ? Double.parseDouble(OPTS.get(k)) : def; }

  static void die(String msg) { throw new IllegalArgumentException(msg); }

  static synchronized void emit(String json) {
    System.out.println(json);
    System.out.flush();
  }

  static String q(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static String f3(double v) { return String.format(Locale.ROOT, "%.3f", v); }

  static final String NONCE = Long.toString(System.currentTimeMillis(), 36) + Integer.toString(new Random().nextInt(1 << 20), 36);

  // ------------------------------------------------------------------ latency recording

  /** Per-thread growable arrays of latencies (ns); merged at the end of a run. */
  static final class Recorder {
    final ConcurrentLinkedQueue<long[][]> all = new ConcurrentLinkedQueue<>();
    final ThreadLocal<long[][]> local = ThreadLocal.withInitial(() -> {
      long[][] h = new long[][] {new long[1 << 14], new long[1]};
      all.add(h);
      return h;
    });

    void add(long ns) {
      long[][] h = local.get();
      int n = (int) h[1][0];
      if (n == h[0].length) h[0] = Arrays.copyOf(h[0], n * 2);
      h[0][n] = ns;
      h[1][0] = n + 1;
    }

    long[] merged() {
      int total = 0;
      for (long[][] h : all) total += (int) h[1][0];
      long[] m = new long[total];
      int off = 0;
      for (long[][] h : all) {
        int n = (int) h[1][0];
        System.arraycopy(h[0], 0, m, off, n);
        off += n;
      }
      Arrays.sort(m);
      return m;
    }
  }

  static double pct(long[] sorted, double p) {
    if (sorted.length == 0) return 0;
    int i = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
  }

  static String result(long count, long errors, long durationNs, int size, Recorder rec, String extra) {
    long[] s = rec.merged();
    double sum = 0;
    for (long v : s) sum += v;
    double secs = durationNs / 1e9;
    double tput = secs > 0 ? count / secs : 0;
    return "{\"count\":" + count + ",\"errors\":" + errors + ",\"durationMs\":" + f3(durationNs / 1e6)
        + ",\"throughput\":" + f3(tput) + ",\"mbps\":" + f3(tput * size / 1e6)
        + ",\"lat\":{\"n\":" + s.length + ",\"p50\":" + f3(pct(s, 0.50)) + ",\"p90\":" + f3(pct(s, 0.90))
        + ",\"p99\":" + f3(pct(s, 0.99)) + ",\"p999\":" + f3(pct(s, 0.999))
        + ",\"max\":" + f3(s.length == 0 ? 0 : s[s.length - 1] / 1e6)
        + ",\"mean\":" + f3(s.length == 0 ? 0 : sum / s.length / 1e6) + "}"
        + (extra == null ? "" : "," + extra) + "}";
  }

  /** Prints a progress event every second until stopped. */
  static Thread progress(String label, LongAdder count, LongAdder errors, long startNs) {
    Thread t = new Thread(() -> {
      try {
        while (true) {
          Thread.sleep(1000);
          emit("{\"event\":\"progress\",\"label\":" + q(label) + ",\"count\":" + count.sum() + ",\"errors\":" + errors.sum()
              + ",\"elapsedMs\":" + (System.nanoTime() - startNs) / 1_000_000 + "}");
        }
      } catch (InterruptedException e) {
        // stopped
      }
    }, "bench-progress");
    t.setDaemon(true);
    t.start();
    return t;
  }

  // ------------------------------------------------------------------ client setup

  static DefaultMQProducer producer() throws Exception {
    return producer("bench_pg_" + NONCE, "bench_" + NONCE);
  }

  /** A started producer; each instance name is its own client (own connections to the nameserver and brokers). */
  static DefaultMQProducer producer(String group, String instanceName) throws Exception {
    DefaultMQProducer p = new DefaultMQProducer(group);
    p.setNamesrvAddr(str("namesrv", "127.0.0.1:9876"));
    p.setInstanceName(instanceName);
    p.setSendMsgTimeout(num("sendTimeout", 5000));
    // measure the server with real body sizes: no client-side zip of bodies > 4 KiB
    p.setCompressMsgBodyOverHowmuch(Integer.MAX_VALUE);
    p.start();
    return p;
  }

  /** Creates TOPIC with QUEUES read/write queues on every master (UPDATE_AND_CREATE_TOPIC) and waits for the route. */
  static void ensureTopic(DefaultMQProducer p, String topic, int queues) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try {
        p.createTopic("TBW102", topic, queues);
        break;
      } catch (Exception e) {
        last = e;
        Thread.sleep(300);
      }
    }
    while (System.nanoTime() < deadline) {
      try {
        List<MessageQueue> mqs = p.fetchPublishMessageQueues(topic);
        if (mqs.size() >= queues) return;
      } catch (Exception e) {
        last = e;
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("topic " + topic + " with " + queues + " queues not routable after 30s", last);
  }

  static byte[] randomBody(int size) {
    byte[] b = new byte[size];
    new Random(42).nextBytes(b);
    return b;
  }

  // ------------------------------------------------------------------ send

  static void runSend() throws Exception {
    String topic = str("topic", "BenchSend");
    int queues = num("queues", 16);
    int size = num("size", 1024);
    String kind = str("send", "sync");
    DefaultMQProducer p = producer();
    ensureTopic(p, topic, queues);
    byte[] body = randomBody(size);
    int warmup = num("warmup", 3);
    if (warmup > 0) {
      emit("{\"event\":\"warmup-start\"}");
      sendRun(p, topic, kind, body, warmup * 1000L, "warmup");
    }
    int runs = num("runs", 3);
    long ms = Math.round(dbl("seconds", 5) * 1000);
    for (int r = 1; r <= runs; r++) {
      emit("{\"event\":\"run-start\",\"run\":" + r + "}");
      String res = sendRun(p, topic, kind, body, ms, "run " + r);
      emit("{\"event\":\"run-end\",\"run\":" + r + ",\"result\":" + res + "}");
    }
    p.shutdown();
  }

  static String sendRun(DefaultMQProducer p, String topic, String kind, byte[] body, long ms, String label) throws Exception {
    int threads = num("threads", 1);
    int batch = num("batch", 16);
    int inflight = num("inflight", 256);
    Recorder rec = new Recorder();
    LongAdder count = new LongAdder();
    LongAdder errors = new LongAdder();
    AtomicLong lastError = new AtomicLong();
    String[] lastErrorText = {null};
    long start = System.nanoTime();
    long end = start + ms * 1_000_000L;
    Thread prog = progress(label, count, errors, start);
    List<Thread> ts = new ArrayList<>();
    Semaphore sem = new Semaphore(inflight);
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        while (System.nanoTime() < end) {
          try {
            if (kind.equals("sync")) {
              Message m = new Message(topic, body);
              long t0 = System.nanoTime();
              SendResult sr = p.send(m);
              long dt = System.nanoTime() - t0;
              if (sr.getSendStatus() == SendStatus.SEND_OK) { rec.add(dt); count.increment(); }
              else { errors.increment(); lastErrorText[0] = sr.getSendStatus().toString(); }
            } else if (kind.equals("batch")) {
              List<Message> ms2 = new ArrayList<>(batch);
              for (int k = 0; k < batch; k++) ms2.add(new Message(topic, body));
              long t0 = System.nanoTime();
              SendResult sr = p.send(ms2);
              long dt = System.nanoTime() - t0;
              if (sr.getSendStatus() == SendStatus.SEND_OK) { rec.add(dt); count.add(batch); }
              else { errors.add(batch); lastErrorText[0] = sr.getSendStatus().toString(); }
            } else if (kind.equals("async")) {
              sem.acquire();
              Message m = new Message(topic, body);
              long t0 = System.nanoTime();
              try {
                p.send(m, new SendCallback() {
                  @Override public void onSuccess(SendResult sr) {
                    rec.add(System.nanoTime() - t0);
                    if (sr.getSendStatus() == SendStatus.SEND_OK) count.increment(); else errors.increment();
                    sem.release();
                  }
                  @Override public void onException(Throwable e) {
                    errors.increment();
                    lastErrorText[0] = e.toString();
                    sem.release();
                  }
                });
              } catch (Exception e) {
                sem.release();
                throw e;
              }
            } else {
              throw new IllegalArgumentException("unknown --send " + kind);
            }
          } catch (IllegalArgumentException e) {
            throw e;
          } catch (Exception e) {
            errors.increment();
            lastErrorText[0] = e.toString();
            lastError.set(System.nanoTime());
            try { Thread.sleep(10); } catch (InterruptedException ie) { return; }
          }
        }
      }, "bench-sender-" + i);
      t.start();
      ts.add(t);
    }
    for (Thread t : ts) t.join();
    if (kind.equals("async")) {
      // wait for the outstanding callbacks
      if (sem.tryAcquire(inflight, 60, TimeUnit.SECONDS)) sem.release(inflight);
    }
    long dur = System.nanoTime() - start;
    prog.interrupt();
    String extra = "\"threads\":" + threads + ",\"kind\":" + q(kind) + ",\"size\":" + body.length
        + (kind.equals("batch") ? ",\"batch\":" + batch : "") + (kind.equals("async") ? ",\"inflight\":" + inflight : "")
        + (lastErrorText[0] != null ? ",\"lastError\":" + q(lastErrorText[0]) : "");
    return result(count.sum(), errors.sum(), dur, body.length, rec, extra);
  }

  // ------------------------------------------------------------------ consume (drain a backlog)

  /** Message i of a backlog: with --tags N, tag "t(i mod N)", property k = i mod N and a region. */
  static Message backlogMessage(String topic, byte[] body, int i, int tags) {
    Message m = new Message(topic, body);
    if (tags > 0) {
      m.setTags("t" + (i % tags));
      m.putUserProperty("k", Integer.toString(i % tags));
      m.putUserProperty("region", (i & 1) == 0 ? "eu" : "us");
    }
    return m;
  }

  static void runConsume() throws Exception {
    String topic = str("topic", "BenchConsume");
    int queues = num("queues", 16);
    int size = num("size", 1024);
    int prefill = num("prefill", 50000);
    int threads = num("threads", 16);
    int batch = num("prefillBatch", 1);
    int tags = num("tags", 0);
    boolean filtered = OPTS.containsKey("subscribe") || OPTS.containsKey("sql");
    DefaultMQProducer p = producer();
    ensureTopic(p, topic, queues);
    byte[] body = randomBody(size);

    emit("{\"event\":\"phase\",\"name\":\"prefill\",\"count\":" + prefill + "}");
    AtomicInteger claim = new AtomicInteger();
    LongAdder sent = new LongAdder();
    LongAdder matching = new LongAdder();
    LongAdder errors = new LongAdder();
    long ps = System.nanoTime();
    long prefillEnd = ps + (long) (dbl("prefillSeconds", 15) * 1e9);
    Thread prog = progress("prefill", sent, errors, ps);
    List<Thread> ts = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        while (System.nanoTime() < prefillEnd) {
          int first = claim.getAndAdd(batch);
          if (first >= prefill) break;
          int n = Math.min(batch, prefill - first);
          List<Message> msgs = new ArrayList<>(n);
          for (int k = 0; k < n; k++) msgs.add(backlogMessage(topic, body, first + k, tags));
          boolean ok = false;
          for (int attempt = 0; attempt < 5 && !ok; attempt++) {
            try {
              SendResult r = n == 1 ? p.send(msgs.get(0)) : p.send(msgs);
              ok = r.getSendStatus() == SendStatus.SEND_OK;
            } catch (Exception e) {
              errors.increment();
            }
          }
          if (!ok) continue;
          sent.add(n);
          if (tags > 0) for (int k = first; k < first + n; k++) if (k % tags == 0) matching.increment();
        }
      });
      t.start();
      ts.add(t);
    }
    for (Thread t : ts) t.join();
    prog.interrupt();
    long pdur = System.nanoTime() - ps;
    long backlog = sent.sum();
    long expected = filtered ? matching.sum() : backlog;
    emit("{\"event\":\"phase-end\",\"name\":\"prefill\",\"count\":" + backlog + ",\"matching\":" + expected
        + ",\"errors\":" + errors.sum() + ",\"durationMs\":" + pdur / 1_000_000 + "}");
    p.shutdown();

    int runs = num("runs", 3);
    boolean cold = OPTS.containsKey("cold");
    // (the cold scenario too: its page cache is dropped before each measured run, after the warm-up)
    int warmupSeconds = num("warmup", 1);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    if (warmupSeconds > 0) {
      // warm-up drains (new groups) until --warmup seconds passed: one drain of the backlog takes a second or two,
      // less than the JIT needs for the consumer's code, which then competed with the measured runs
      emit("{\"event\":\"warmup-start\"}");
      long until = System.nanoTime() + warmupSeconds * 1_000_000_000L;
      int k = 0;
      do {
        drain(topic, backlog, expected, size, "warmup", 1000 + k++);
      } while (System.nanoTime() < until);
    }
    for (int r = 1; r <= runs; r++) {
      String label = "run " + r;
      if (cold) {
        emit("{\"event\":\"need-cold\",\"run\":" + r + "}");
        String answer = in.readLine();
        if (answer == null || !answer.trim().equals("go")) return;
      }
      emit("{\"event\":\"run-start\",\"run\":" + r + "}");
      String res = drain(topic, backlog, expected, size, label, r);
      emit("{\"event\":\"run-end\",\"run\":" + r + ",\"result\":" + res + "}");
    }
  }

  /** One new group drains the topic from offset 0 until `expected` messages arrived (or 20 s without progress). */
  static String drain(String topic, long backlog, long expected, int size, String label, int run) throws Exception {
    LongAdder got = new LongAdder();
    LongAdder errors = new LongAdder();
    LongAdder unexpected = new LongAdder();
    AtomicLong first = new AtomicLong();
    AtomicLong last = new AtomicLong();
    DefaultMQPushConsumer c = new DefaultMQPushConsumer("bench_cg_" + NONCE + "_" + run);
    c.setNamesrvAddr(str("namesrv", "127.0.0.1:9876"));
    c.setInstanceName("bench_c_" + NONCE + "_" + run);
    c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    String sql = str("sql", null);
    String tagExpr = str("subscribe", "*");
    if (sql != null) c.subscribe(topic, MessageSelector.bySql(sql));
    else c.subscribe(topic, tagExpr);
    // a filtered run checks what arrives: only k = 0 matches the scenarios' selectors
    boolean check = sql != null || !tagExpr.equals("*");
    c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
      long now = System.nanoTime();
      first.compareAndSet(0, now);
      got.add(msgs.size());
      if (check) for (MessageExt m : msgs) if (!"0".equals(m.getUserProperty("k"))) unexpected.increment();
      last.set(now);
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    long start = System.nanoTime();
    Thread prog = progress(label, got, errors, start);
    c.start();
    long lastProgress = System.nanoTime();
    long seen = 0;
    long stallNs = TimeUnit.SECONDS.toNanos(num("stallSeconds", 20));
    while (got.sum() < expected) {
      Thread.sleep(20);
      long g = got.sum();
      if (g != seen) { seen = g; lastProgress = System.nanoTime(); }
      else if (System.nanoTime() - lastProgress > stallNs) break;
    }
    long end = last.get() == 0 ? System.nanoTime() : last.get();
    prog.interrupt();
    c.shutdown();
    long n = got.sum();
    Recorder none = new Recorder();
    // throughput over the drain itself (first to last delivery); consumer start-up/rebalance is reported as firstMs
    long dur = (first.get() != 0 && end > first.get() && n > 1) ? end - first.get() : end - start;
    // scanned: backlog messages the broker went through per second, from the consumer's start (a filtered drain
    // delivers only the matches, but the server reads the whole backlog)
    double scanRate = backlog / ((end - start) / 1e9);
    String extra = "\"backlog\":" + backlog + ",\"expected\":" + expected + ",\"unexpected\":" + unexpected.sum()
        + ",\"scannedPerSec\":" + f3(scanRate)
        + ",\"firstMs\":" + f3(first.get() == 0 ? -1 : (first.get() - start) / 1e6)
        + ",\"sinceStartMs\":" + f3((end - start) / 1e6)
        + (n < expected ? ",\"lastError\":" + q("stalled: " + n + " of " + expected + " delivered") : "")
        + (unexpected.sum() > 0 ? ",\"lastError\":" + q(unexpected.sum() + " delivered messages do not match the filter") : "");
    return result(n, expected - Math.min(n, expected) + unexpected.sum(), dur, size, none, extra);
  }

  // ------------------------------------------------------------------ end-to-end latency at a fixed rate

  static volatile int currentRun = -1;

  static void runE2E() throws Exception {
    String topic = str("topic", "BenchE2E");
    int queues = num("queues", 16);
    int size = Math.max(16, num("size", 1024));
    DefaultMQProducer p = producer();
    ensureTopic(p, topic, queues);

    final Recorder[] rec = {new Recorder()};
    LongAdder[] got = {new LongAdder()};
    DefaultMQPushConsumer c = new DefaultMQPushConsumer("bench_e2e_" + NONCE);
    c.setNamesrvAddr(str("namesrv", "127.0.0.1:9876"));
    c.setInstanceName("bench_e_" + NONCE);
    c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
    c.subscribe(topic, "*");
    c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
      long now = System.nanoTime();
      for (MessageExt m : msgs) {
        ByteBuffer b = ByteBuffer.wrap(m.getBody());
        long ts = b.getLong(0);
        int run = b.getInt(8);
        if (run == currentRun) {
          rec[0].add(now - ts);
          got[0].increment();
        }
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    c.start();

    byte[] template = randomBody(size);
    int warmup = Math.max(1, num("warmup", 3));
    emit("{\"event\":\"warmup-start\"}");
    // warm-up until the consumer has its queues and at least `warmup` seconds passed
    currentRun = 0;
    long ws = System.nanoTime();
    while (true) {
      paced(p, topic, template, 0, 1000, new LongAdder(), new LongAdder());
      if (got[0].sum() > 0 && System.nanoTime() - ws >= warmup * 1_000_000_000L) break;
      if (System.nanoTime() - ws > 60_000_000_000L) throw new IllegalStateException("consumer received nothing within 60s");
    }
    int runs = num("runs", 3);
    long ms = Math.round(dbl("seconds", 5) * 1000);
    for (int r = 1; r <= runs; r++) {
      rec[0] = new Recorder();
      got[0] = new LongAdder();
      currentRun = r;
      emit("{\"event\":\"run-start\",\"run\":" + r + "}");
      LongAdder sent = new LongAdder();
      LongAdder errors = new LongAdder();
      long start = System.nanoTime();
      Thread prog = progress("run " + r, got[0], errors, start);
      paced(p, topic, template, r, ms, sent, errors);
      long sendEnd = System.nanoTime();
      long deadline = sendEnd + TimeUnit.SECONDS.toNanos(15);
      while (got[0].sum() < sent.sum() && System.nanoTime() < deadline) Thread.sleep(5);
      prog.interrupt();
      long n = got[0].sum();
      String extra = "\"sent\":" + sent.sum() + ",\"lost\":" + Math.max(0, sent.sum() - n) + ",\"rate\":" + num("rate", 2000);
      emit("{\"event\":\"run-end\",\"run\":" + r + ",\"result\":" + result(n, errors.sum(), sendEnd - start, size, rec[0], extra) + "}");
    }
    currentRun = -1;
    c.shutdown();
    p.shutdown();
  }

  /** Sends at --rate msg/s from --threads sync senders for MS milliseconds; body = nanoTime(8) run(4) padding. */
  static void paced(DefaultMQProducer p, String topic, byte[] template, int run, long ms, LongAdder sent, LongAdder errors)
      throws InterruptedException {
    int threads = num("threads", 4);
    double rate = num("rate", 2000);
    long interval = (long) (threads * 1e9 / rate);
    long start = System.nanoTime();
    long end = start + ms * 1_000_000L;
    List<Thread> ts = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      final long offset = i * interval / threads;
      Thread t = new Thread(() -> {
        long next = start + offset;
        while (true) {
          long now = System.nanoTime();
          if (next >= end) break;
          if (now < next) {
            long sl = next - now;
            try { Thread.sleep(sl / 1_000_000, (int) (sl % 1_000_000)); } catch (InterruptedException e) { return; }
          }
          byte[] body = template.clone();
          ByteBuffer b = ByteBuffer.wrap(body);
          b.putLong(0, System.nanoTime());
          b.putInt(8, run);
          try {
            if (p.send(new Message(topic, body)).getSendStatus() == SendStatus.SEND_OK) sent.increment();
            else errors.increment();
          } catch (Exception e) {
            errors.increment();
          }
          next += interval;
        }
      });
      t.start();
      ts.add(t);
    }
    for (Thread t : ts) t.join();
  }

  // ------------------------------------------------------------------ probe (start-up time)

  static void runProbe() throws Exception {
    DefaultMQProducer p = new DefaultMQProducer("bench_probe_" + NONCE);
    p.setNamesrvAddr(str("namesrv", "127.0.0.1:9876"));
    p.setInstanceName("bench_p_" + NONCE);
    p.setSendMsgTimeout(2000);
    p.setRetryTimesWhenSendFailed(0);
    p.start();
    // warm the client code paths a little before the clock starts (no server yet: fails fast)
    try { p.send(new Message("BenchProbe", new byte[16]), 200); } catch (Exception ignored) { /* expected */ }
    emit("{\"event\":\"probe-ready\"}");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    if (in.readLine() == null) return;
    long t0 = System.nanoTime();
    long deadline = t0 + TimeUnit.SECONDS.toNanos(num("timeout", 180));
    int attempts = 0;
    String lastError = "";
    while (System.nanoTime() < deadline) {
      attempts++;
      try {
        SendResult r = p.send(new Message(str("topic", "BenchProbe"), "probe".getBytes(StandardCharsets.UTF_8)), 2000);
        if (r.getSendStatus() == SendStatus.SEND_OK) {
          emit("{\"event\":\"probe-ok\",\"ms\":" + f3((System.nanoTime() - t0) / 1e6) + ",\"attempts\":" + attempts + "}");
          p.shutdown();
          return;
        }
        lastError = r.getSendStatus().toString();
      } catch (Exception e) {
        lastError = e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).split("\n")[0];
      }
      Thread.sleep(20);
    }
    emit("{\"event\":\"probe-fail\",\"attempts\":" + attempts + ",\"lastError\":" + q(lastError) + "}");
    p.shutdown();
  }
}
