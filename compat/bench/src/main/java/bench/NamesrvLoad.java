package bench;

import static bench.Driver.dbl;
import static bench.Driver.emit;
import static bench.Driver.num;
import static bench.Driver.q;
import static bench.Driver.str;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.DataVersion;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.UtilAll;
import org.apache.rocketmq.common.protocol.RequestCode;
import org.apache.rocketmq.common.protocol.ResponseCode;
import org.apache.rocketmq.common.protocol.body.RegisterBrokerBody;
import org.apache.rocketmq.common.protocol.body.TopicConfigSerializeWrapper;
import org.apache.rocketmq.common.protocol.header.namesrv.RegisterBrokerRequestHeader;
import org.apache.rocketmq.common.protocol.route.TopicRouteData;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingClient;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * Nameserver route lookups (--mode namesrv). --brokers B fake brokers register (REGISTER_BROKER built with the stock
 * library's RegisterBrokerRequestHeader / RegisterBrokerBody, as a broker's BrokerOuterAPI sends it, each over its
 * own connection, again every 30 s) --topics T topics of 8 queues each, every topic on every fake broker. Then
 * --connections C stock clients (one MQClientInstance each: one connection to the nameserver) look routes up with
 * GET_ROUTEINFO_BY_TOPIC (MQClientAPIImpl.getTopicRouteInfoFromNameServer) from --threads N threads each, a random
 * topic per call; a route with fewer than B brokers counts as an error.
 *
 * Events: phase/phase-end "register", then warmup-start, run-start, run-end (count = lookups, lat = per lookup).
 */
final class NamesrvLoad {
  private NamesrvLoad() {}

  static void run() throws Exception {
    // What BrokerStartup does: every request says it comes from this version. Without it the registrations go out
    // as version 0 and a 4.9.x nameserver reads them in the pre-3.0.11 layout (no topics).
    System.setProperty(RemotingCommand.REMOTING_VERSION_KEY, Integer.toString(MQVersion.CURRENT_VERSION));
    String namesrv = str("namesrv", "127.0.0.1:9876");
    int brokers = num("brokers", 10);
    int topics = num("topics", 1000);
    String prefix = str("topic", "BenchRoute");
    String[] names = new String[topics];
    for (int i = 0; i < topics; i++) names[i] = prefix + "_" + i;

    emit("{\"event\":\"phase\",\"name\":\"register\",\"count\":" + brokers + "}");
    long rs = System.nanoTime();
    List<NettyRemotingClient> registrars = new ArrayList<>();
    List<byte[]> bodies = new ArrayList<>();
    for (int b = 0; b < brokers; b++) {
      NettyRemotingClient c = new NettyRemotingClient(new NettyClientConfig());
      c.start();
      registrars.add(c);
      ConcurrentMap<String, TopicConfig> table = new ConcurrentHashMap<>();
      for (String name : names) table.put(name, new TopicConfig(name, 8, 8, 6));
      TopicConfigSerializeWrapper wrapper = new TopicConfigSerializeWrapper();
      wrapper.setTopicConfigTable(table);
      wrapper.setDataVersion(new DataVersion());
      RegisterBrokerBody body = new RegisterBrokerBody();
      body.setTopicConfigSerializeWrapper(wrapper);
      body.setFilterServerList(new ArrayList<>());
      bodies.add(body.encode(false));
    }
    for (int b = 0; b < brokers; b++) register(registrars.get(b), namesrv, b, bodies.get(b));
    emit("{\"event\":\"phase-end\",\"name\":\"register\",\"count\":" + brokers + ",\"topics\":" + topics
        + ",\"bodyBytes\":" + bodies.get(0).length + ",\"durationMs\":" + (System.nanoTime() - rs) / 1_000_000 + "}");
    // Brokers re-register every 30 s (BrokerController's registerBrokerAll period); the nameserver expires them after 120 s.
    Thread keepAlive = new Thread(() -> {
      try {
        while (true) {
          Thread.sleep(30_000);
          for (int b = 0; b < brokers; b++) register(registrars.get(b), namesrv, b, bodies.get(b));
        }
      } catch (InterruptedException e) {
        // stopped
      } catch (Exception e) {
        emit("{\"event\":\"log\",\"message\":" + q("re-registration failed: " + e) + "}");
      }
    }, "bench-registrar");
    keepAlive.setDaemon(true);
    keepAlive.start();

    int connections = num("connections", 16);
    List<DefaultMQProducer> clients = new ArrayList<>();
    List<MQClientAPIImpl> apis = new ArrayList<>();
    for (int i = 0; i < connections; i++) {
      DefaultMQProducer p = Driver.producer("bench_ns_pg_" + Driver.NONCE, "bench_ns_" + Driver.NONCE + "_" + i);
      clients.add(p);
      apis.add(p.getDefaultMQProducerImpl().getmQClientFactory().getMQClientAPIImpl());
    }
    // every route is there before the clock starts
    TopicRouteData first = apis.get(0).getTopicRouteInfoFromNameServer(names[0], 3000);
    if (first.getBrokerDatas().size() < brokers) {
      throw new IllegalStateException("route of " + names[0] + " lists " + first.getBrokerDatas().size() + " brokers, not " + brokers);
    }

    emit("{\"event\":\"warmup-start\"}");
    int warmup = num("warmup", 3);
    if (warmup > 0) lookups(apis, names, brokers, warmup * 1000L, "warmup");
    int runs = num("runs", 3);
    long ms = Math.round(dbl("seconds", 5) * 1000);
    for (int r = 1; r <= runs; r++) {
      emit("{\"event\":\"run-start\",\"run\":" + r + "}");
      String res = lookups(apis, names, brokers, ms, "run " + r);
      emit("{\"event\":\"run-end\",\"run\":" + r + ",\"result\":" + res + "}");
    }
    keepAlive.interrupt();
    for (DefaultMQProducer p : clients) p.shutdown();
    for (NettyRemotingClient c : registrars) c.shutdown();
  }

  static void register(NettyRemotingClient c, String namesrv, int b, byte[] body) throws Exception {
    RegisterBrokerRequestHeader h = new RegisterBrokerRequestHeader();
    h.setBrokerAddr("127.0.0.1:" + (20911 + 10 * b));
    h.setBrokerId((long) MixAll.MASTER_ID);
    h.setBrokerName("bench-broker-" + b);
    h.setClusterName("BenchCluster");
    h.setHaServerAddr("127.0.0.1:" + (20912 + 10 * b));
    h.setCompressed(false);
    h.setBodyCrc32(UtilAll.crc32(body));
    RemotingCommand req = RemotingCommand.createRequestCommand(RequestCode.REGISTER_BROKER, h);
    req.setBody(body);
    RemotingCommand res = c.invokeSync(namesrv, req, 10_000);
    if (res == null || res.getCode() != ResponseCode.SUCCESS) {
      throw new IllegalStateException("REGISTER_BROKER of bench-broker-" + b + " failed: "
          + (res == null ? "no response" : res.getCode() + " " + res.getRemark()));
    }
  }

  static String lookups(List<MQClientAPIImpl> apis, String[] names, int brokers, long ms, String label)
      throws InterruptedException {
    int threads = num("threads", 4);
    Driver.Recorder rec = new Driver.Recorder();
    LongAdder count = new LongAdder();
    LongAdder errors = new LongAdder();
    String[] lastError = {null};
    long start = System.nanoTime();
    long end = start + ms * 1_000_000L;
    Thread prog = Driver.progress(label, count, errors, start);
    List<Thread> ts = new ArrayList<>();
    for (MQClientAPIImpl api : apis) {
      for (int i = 0; i < threads; i++) {
        Thread t = new Thread(() -> {
          ThreadLocalRandom rnd = ThreadLocalRandom.current();
          while (System.nanoTime() < end) {
            String topic = names[rnd.nextInt(names.length)];
            try {
              long t0 = System.nanoTime();
              TopicRouteData route = api.getTopicRouteInfoFromNameServer(topic, 3000);
              long dt = System.nanoTime() - t0;
              if (route.getBrokerDatas().size() >= brokers) { rec.add(dt); count.increment(); }
              else { errors.increment(); lastError[0] = "route of " + topic + " lists " + route.getBrokerDatas().size() + " brokers"; }
            } catch (Exception e) {
              errors.increment();
              lastError[0] = e.toString();
              try { Thread.sleep(10); } catch (InterruptedException ie) { return; }
            }
          }
        }, "bench-lookup");
        t.start();
        ts.add(t);
      }
    }
    for (Thread t : ts) t.join(TimeUnit.MILLISECONDS.toMillis(ms + 30_000));
    prog.interrupt();
    String extra = "\"connections\":" + apis.size() + ",\"threadsPerConnection\":" + threads + ",\"topics\":" + names.length
        + ",\"brokers\":" + brokers + (lastError[0] != null ? ",\"lastError\":" + q(lastError[0]) : "");
    return Driver.result(count.sum(), errors.sum(), System.nanoTime() - start, 0, rec, extra);
  }
}
