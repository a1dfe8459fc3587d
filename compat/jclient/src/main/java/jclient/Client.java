package jclient;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * One stock RocketMQ Java client for the fault scripts (compat/lib/java-client.mjs), the same code on every
 * rocketmq-client version compat/jclient/build.sh builds it against.
 *
 * <pre>
 * java -cp $(compat/jclient/build.sh [VERSION]) jclient.Client --role producer|push|litepull --namesrv H:P --topic T
 *      --group G [--prefix P] [--count N] [--consumeDelayMs MS]
 *   producer  DefaultMQProducer with default settings (but the name server): unique bodies P-0, P-1, ... sent one at
 *             a time (sync) until stopped or N sent; a line per SEND_OK and per failure
 *   push      DefaultMQPushConsumer (clustering, from the first offset): a line per message received
 *   litepull  DefaultLitePullConsumer in subscribe mode (auto-commit, from the first offset): a line per message
 *             polled
 * </pre>
 *
 * Lines (JSON, stdout): {"event":"ready"}; {"event":"ok",body,queueId,queueOffset,msgId (offset msgId),uniqId,
 * brokerName,sentAt,at}; {"event":"fail",body,error,sentAt,at}; {"event":"msg",body,queueId,queueOffset,brokerName,
 * msgId,at}; {"event":"error",error}; {"event":"closed"}. Stops cleanly (clients shut down, offsets persisted) on
 * SIGTERM or at the end of stdin.
 */
public final class Client {
  private static final Map<String, String> OPTS = new HashMap<>();
  private static final CountDownLatch STOP = new CountDownLatch(1);
  private static final CountDownLatch FINISHED = new CountDownLatch(1);
  private static final PrintStream OUT =
      new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16), false, StandardCharsets.UTF_8);

  private Client() {
  }

  public static void main(String[] args) {
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) throw new IllegalArgumentException("unexpected argument " + args[i]);
      OPTS.put(args[i].substring(2), args[i + 1]);
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      STOP.countDown();
      try {
        FINISHED.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException ignored) {
        Thread.currentThread().interrupt();
      }
    }));
    Thread stdin = new Thread(() -> {
      try {
        InputStream in = System.in;
        byte[] buf = new byte[256];
        while (in.read(buf) >= 0) {
          // nothing is read from stdin; its end is the stop signal
        }
      } catch (Exception ignored) {
        // a broken pipe is an end too
      }
      STOP.countDown();
    }, "stdin-watch");
    stdin.setDaemon(true);
    stdin.start();
    int rc = 0;
    try {
      String role = opt("role", "producer");
      switch (role) {
        case "producer": produce(); break;
        case "push": push(); break;
        case "litepull": litePull(); break;
        default: throw new IllegalArgumentException("unknown --role " + role);
      }
    } catch (Throwable t) {
      emit("{\"event\":\"error\",\"error\":" + str(t.toString()) + "}");
      rc = 1;
    }
    emit("{\"event\":\"closed\"}");
    FINISHED.countDown();
    // halt, not exit: a shutdown hook may be waiting on FINISHED, and client threads must not keep the JVM up
    Runtime.getRuntime().halt(rc);
  }

  private static void produce() throws Exception {
    DefaultMQProducer p = new DefaultMQProducer(opt("group", "PG_jclient"));
    p.setNamesrvAddr(opt("namesrv", null));
    p.start();
    emit("{\"event\":\"ready\"}");
    String topic = opt("topic", null);
    String prefix = opt("prefix", "jclient");
    long count = Long.parseLong(opt("count", "0"));
    try {
      for (long i = 0; STOP.getCount() > 0 && (count <= 0 || i < count); i++) {
        String body = prefix + "-" + i;
        long sentAt = System.currentTimeMillis();
        try {
          SendResult r = p.send(new Message(topic, "TagJ", body.getBytes(StandardCharsets.UTF_8)));
          long at = System.currentTimeMillis();
          if (r.getSendStatus() == SendStatus.SEND_OK) {
            emit("{\"event\":\"ok\",\"body\":" + str(body) + ",\"queueId\":" + r.getMessageQueue().getQueueId()
                + ",\"queueOffset\":" + r.getQueueOffset() + ",\"msgId\":" + str(r.getOffsetMsgId())
                + ",\"uniqId\":" + str(r.getMsgId()) + ",\"brokerName\":" + str(r.getMessageQueue().getBrokerName())
                + ",\"sentAt\":" + sentAt + ",\"at\":" + at + "}");
          } else {
            emit(failLine(body, r.getSendStatus().name(), sentAt));
          }
        } catch (Exception e) {
          emit(failLine(body, e.toString(), sentAt));
          STOP.await(50, TimeUnit.MILLISECONDS); // no route at all answers at once: do not spin
        }
      }
    } finally {
      p.shutdown();
    }
  }

  private static String failLine(String body, String error, long sentAt) {
    String e = error.length() > 200 ? error.substring(0, 200) : error;
    return "{\"event\":\"fail\",\"body\":" + str(body) + ",\"error\":" + str(e) + ",\"sentAt\":" + sentAt
        + ",\"at\":" + System.currentTimeMillis() + "}";
  }

  private static void push() throws Exception {
    DefaultMQPushConsumer c = new DefaultMQPushConsumer(opt("group", "CID_jclient"));
    c.setNamesrvAddr(opt("namesrv", null));
    c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    c.subscribe(opt("topic", null), "*");
    long delayMs = Long.parseLong(opt("consumeDelayMs", "0"));
    c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
      for (MessageExt m : msgs) {
        emitMessage(m, ctx.getMessageQueue().getBrokerName());
        pause(delayMs);
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    c.start();
    emit("{\"event\":\"ready\"}");
    try {
      STOP.await();
    } finally {
      c.shutdown();
    }
  }

  private static void litePull() throws Exception {
    DefaultLitePullConsumer c = new DefaultLitePullConsumer(opt("group", "CID_jclient_lite"));
    c.setNamesrvAddr(opt("namesrv", null));
    c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    c.subscribe(opt("topic", null), "*");
    long delayMs = Long.parseLong(opt("consumeDelayMs", "0"));
    c.start();
    emit("{\"event\":\"ready\"}");
    try {
      while (STOP.getCount() > 0) {
        List<MessageExt> polled = c.poll(1000);
        for (MessageExt m : polled) {
          emitMessage(m, m.getBrokerName());
          pause(delayMs);
        }
      }
    } finally {
      c.shutdown();
    }
  }

  private static void emitMessage(MessageExt m, String brokerName) {
    emit("{\"event\":\"msg\",\"body\":" + str(new String(m.getBody(), StandardCharsets.UTF_8)) + ",\"queueId\":" + m.getQueueId()
        + ",\"queueOffset\":" + m.getQueueOffset() + ",\"brokerName\":" + str(brokerName) + ",\"msgId\":" + str(m.getMsgId())
        + ",\"at\":" + System.currentTimeMillis() + "}");
  }

  private static void pause(long ms) {
    if (ms <= 0) return;
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static synchronized void emit(String line) {
    OUT.print(line);
    OUT.print('\n');
    OUT.flush();
  }

  private static String opt(String key, String dflt) {
    String v = OPTS.getOrDefault(key, dflt);
    if (v == null) throw new IllegalArgumentException("--" + key + " is required");
    return v;
  }

  /** A JSON string literal. */
  private static String str(String s) {
    if (s == null) return "null";
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == '"' || ch == '\\') b.append('\\').append(ch);
      else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
      else b.append(ch);
    }
    return b.append('"').toString();
  }
}
