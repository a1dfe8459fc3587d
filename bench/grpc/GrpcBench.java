// Load driver for the gRPC benchmark (bench/grpc-bench.mjs): the stock rocketmq-client-java 5.x against a gRPC
// endpoint. One JSON line per result on stdout, and the lines {"event":"window-start"} / {"event":"window-end"} around
// each measured window (the runner reads the servers' CPU time there).
//   java -cp 'lib/*:classes' GrpcBench send    ENDPOINT TOPIC THREADS SECONDS WARMUP_SECONDS SIZE
//   java -cp 'lib/*:classes' GrpcBench prefill ENDPOINT TOPIC COUNT SIZE
//   java -cp 'lib/*:classes' GrpcBench consume ENDPOINT TOPIC GROUP THREADS COUNT
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;

public class GrpcBench {
    static final ClientServiceProvider P = ClientServiceProvider.loadService();

    public static void main(String[] a) throws Exception {
        ClientConfiguration cfg = ClientConfiguration.newBuilder().setEndpoints(a[1]).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(10)).build();
        switch (a[0]) {
            case "send": send(cfg, a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4]), Integer.parseInt(a[5]), Integer.parseInt(a[6])); break;
            case "prefill": prefill(cfg, a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4])); break;
            case "consume": consume(cfg, a[2], a[3], Integer.parseInt(a[4]), Integer.parseInt(a[5])); break;
            default: throw new IllegalArgumentException(a[0]);
        }
        System.exit(0);
    }

    static void mark(String event) {
        System.out.println("{\"event\":\"" + event + "\"}");
        System.out.flush();
    }

    static void send(ClientConfiguration cfg, String topic, int threads, int seconds, int warmup, int size) throws Exception {
        Producer p = P.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build();
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'x');
        AtomicBoolean measuring = new AtomicBoolean(false);
        AtomicBoolean stop = new AtomicBoolean(false);
        AtomicLong errors = new AtomicLong();
        List<long[]> perThread = new ArrayList<>();
        List<Thread> ts = new ArrayList<>();
        int[] counts = new int[threads];
        for (int t = 0; t < threads; t++) {
            long[] lat = new long[2_000_000];
            perThread.add(lat);
            final int id = t;
            Thread th = new Thread(() -> {
                Message m = P.newMessageBuilder().setTopic(topic).setBody(body).build();
                while (!stop.get()) {
                    long t0 = System.nanoTime();
                    try {
                        p.send(m);
                    } catch (Exception e) {
                        errors.incrementAndGet();
                        continue;
                    }
                    if (measuring.get() && counts[id] < lat.length) lat[counts[id]++] = System.nanoTime() - t0;
                }
            });
            th.start();
            ts.add(th);
        }
        Thread.sleep(warmup * 1000L);
        mark("window-start");
        long start = System.nanoTime();
        measuring.set(true);
        Thread.sleep(seconds * 1000L);
        measuring.set(false);
        mark("window-end");
        double secs = (System.nanoTime() - start) / 1e9;
        stop.set(true);
        for (Thread th : ts) th.join();
        int total = 0;
        for (int c : counts) total += c;
        long[] all = new long[total];
        int k = 0;
        for (int t = 0; t < threads; t++) { System.arraycopy(perThread.get(t), 0, all, k, counts[t]); k += counts[t]; }
        Arrays.sort(all);
        double p50 = total > 0 ? all[(int) (total * 0.50)] / 1e6 : 0;
        double p99 = total > 0 ? all[Math.min(total - 1, (int) (total * 0.99))] / 1e6 : 0;
        System.out.printf("{\"event\":\"send\",\"msgs\":%d,\"seconds\":%.3f,\"tput\":%.1f,\"p50\":%.3f,\"p99\":%.3f,\"errors\":%d}%n",
            total, secs, total / secs, p50, p99, errors.get());
        p.close();
    }

    static void prefill(ClientConfiguration cfg, String topic, int count, int size) throws Exception {
        Producer p = P.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build();
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'y');
        Semaphore inflight = new Semaphore(256);
        AtomicLong errors = new AtomicLong();
        List<CompletableFuture<?>> fs = Collections.synchronizedList(new ArrayList<>());
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            inflight.acquire();
            CompletableFuture<?> f = p.sendAsync(P.newMessageBuilder().setTopic(topic).setBody(body).build())
                .whenComplete((r, e) -> { if (e != null) errors.incrementAndGet(); inflight.release(); });
            fs.add(f);
        }
        inflight.acquire(256);
        System.out.printf("{\"event\":\"prefill\",\"msgs\":%d,\"seconds\":%.3f,\"errors\":%d}%n", count, (System.nanoTime() - t0) / 1e9, errors.get());
        p.close();
    }

    static void consume(ClientConfiguration cfg, String topic, String group, int threads, int count) throws Exception {
        AtomicLong got = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        List<Thread> ts = new ArrayList<>();
        List<SimpleConsumer> cs = new ArrayList<>();
        long[] first = {0};
        long t0 = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            SimpleConsumer c = P.newSimpleConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup(group)
                .setAwaitDuration(Duration.ofSeconds(2))
                .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression("*", FilterExpressionType.TAG))).build();
            cs.add(c);
            Thread th = new Thread(() -> {
                while (got.get() < count) {
                    try {
                        List<MessageView> l = c.receive(32, Duration.ofSeconds(30));
                        for (MessageView mv : l) {
                            c.ack(mv);
                            got.incrementAndGet();
                        }
                    } catch (Exception e) {
                        errors.incrementAndGet();
                    }
                }
            });
            ts.add(th);
        }
        mark("window-start");
        long start = System.nanoTime();
        for (Thread th : ts) th.start();
        for (Thread th : ts) th.join();
        double secs = (System.nanoTime() - start) / 1e9;
        mark("window-end");
        System.out.printf("{\"event\":\"consume\",\"msgs\":%d,\"seconds\":%.3f,\"tput\":%.1f,\"errors\":%d,\"startupSeconds\":%.3f}%n",
            got.get(), secs, got.get() / secs, errors.get(), (start - t0) / 1e9);
        for (SimpleConsumer c : cs) c.close();
    }
}
