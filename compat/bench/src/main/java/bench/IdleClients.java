package bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.protocol.RequestCode;
import org.apache.rocketmq.common.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.apache.rocketmq.common.protocol.heartbeat.HeartbeatData;
import org.apache.rocketmq.common.protocol.heartbeat.ProducerData;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * Idle producer clients without a client instance each: every one holds a connection to the broker and one to the
 * nameserver and sends what an idle stock producer sends — HEART_BEAT (its group and CLIENT_INNER_PRODUCER) to the
 * broker and GET_ROUTEINFO_BY_TOPIC for its topic to the nameserver, every --idleIntervalMs (30 s, the client's
 * heartbeatBrokerInterval and pollNameServerInterval), spread evenly. Frames are built by the stock library
 * (HeartbeatData, RemotingCommand.encode). One thread reads and discards the answers. A stock MQClientInstance per
 * idle client would cost about ten threads each: 8,000 threads for 800 of them on a 2-core machine.
 */
final class IdleClients implements AutoCloseable {
  private final Selector selector = Selector.open();
  private final List<SocketChannel> broker = new ArrayList<>();
  private final List<SocketChannel> namesrv = new ArrayList<>();
  private final List<ByteBuffer> heartbeats = new ArrayList<>();
  private final String topic;
  private final long intervalMs;
  private final Thread loop;
  private volatile boolean running = true;
  final LongAdder sentFrames = new LongAdder();
  final LongAdder answers = new LongAdder();
  volatile String lastError;

  IdleClients(int count, String brokerAddr, String namesrvAddr, String group, String topic, long intervalMs) throws IOException {
    this.topic = topic;
    this.intervalMs = intervalMs;
    for (int i = 0; i < count; i++) {
      broker.add(connect(brokerAddr));
      namesrv.add(connect(namesrvAddr));
      HeartbeatData hb = new HeartbeatData();
      hb.setClientID("127.0.0.1@bench_idle_" + Driver.NONCE + "_" + i);
      Set<ProducerData> producers = new HashSet<>();
      for (String g : new String[] {group, MixAll.CLIENT_INNER_PRODUCER_GROUP}) {
        ProducerData pd = new ProducerData();
        pd.setGroupName(g);
        producers.add(pd);
      }
      hb.setProducerDataSet(producers);
      hb.setConsumerDataSet(new HashSet<>());
      heartbeats.add(ByteBuffer.wrap(hb.encode()));
    }
    loop = new Thread(this::run, "bench-idle-clients");
    loop.setDaemon(true);
  }

  private SocketChannel connect(String addr) throws IOException {
    int colon = addr.lastIndexOf(':');
    SocketChannel ch = SocketChannel.open(new InetSocketAddress(addr.substring(0, colon), Integer.parseInt(addr.substring(colon + 1))));
    ch.socket().setTcpNoDelay(true);
    ch.configureBlocking(false);
    ch.register(selector, SelectionKey.OP_READ);
    return ch;
  }

  /** Sends every client's first heartbeat and route lookup now, then keeps them going. */
  void start() {
    for (int i = 0; i < broker.size(); i++) sendBoth(i);
    loop.start();
  }

  private void sendBoth(int i) {
    RemotingCommand hb = RemotingCommand.createRequestCommand(RequestCode.HEART_BEAT, null);
    hb.setBody(heartbeats.get(i).array());
    write(broker.get(i), hb.encode());
    GetRouteInfoRequestHeader h = new GetRouteInfoRequestHeader();
    h.setTopic(topic);
    write(namesrv.get(i), RemotingCommand.createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, h).encode());
  }

  private void write(SocketChannel ch, ByteBuffer frame) {
    try {
      // a few hundred bytes into an otherwise idle socket: the kernel buffer takes them at once
      for (int spins = 0; frame.hasRemaining() && spins < 1000; spins++) ch.write(frame);
      if (frame.hasRemaining()) lastError = "idle client: a frame could not be written";
      else sentFrames.increment();
    } catch (IOException e) {
      lastError = "idle client: " + e;
    }
  }

  private void run() {
    ByteBuffer sink = ByteBuffer.allocate(64 * 1024);
    int n = broker.size();
    long start = System.currentTimeMillis();
    long[] due = new long[n];
    for (int i = 0; i < n; i++) due[i] = start + intervalMs + i * intervalMs / n;
    while (running) {
      try {
        selector.select(50);
        for (SelectionKey k : selector.selectedKeys()) {
          sink.clear();
          int r = ((SocketChannel) k.channel()).read(sink);
          if (r > 0) answers.increment();
          else if (r < 0) {
            k.cancel();
            lastError = "idle client: the server closed a connection";
          }
        }
        selector.selectedKeys().clear();
      } catch (IOException e) {
        lastError = "idle client: " + e;
      }
      long now = System.currentTimeMillis();
      for (int i = 0; i < n; i++) {
        if (now >= due[i]) {
          sendBoth(i);
          due[i] += intervalMs;
        }
      }
    }
  }

  int openConnections() {
    int open = 0;
    for (SocketChannel ch : broker) if (ch.isConnected()) open++;
    for (SocketChannel ch : namesrv) if (ch.isConnected()) open++;
    return open;
  }

  @Override
  public void close() throws IOException {
    running = false;
    try { loop.join(2000); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
    for (SocketChannel ch : broker) ch.close();
    for (SocketChannel ch : namesrv) ch.close();
    selector.close();
  }
}
