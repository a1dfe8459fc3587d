import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * A stock Java push consumer for the mqadmin tests: it answers what the broker relays to clients
 * (RESET_CONSUMER_CLIENT_OFFSET 220, GET_CONSUMER_RUNNING_INFO 307, CONSUME_MESSAGE_DIRECTLY 309), which
 * ali-ons ignores. Started through `run.sh --consumer NAMESRV GROUP TOPIC[,TOPIC...]`.
 *
 * stdout protocol (one line each): `READY <clientId>` once started, `MSG <topic> <queueId> <queueOffset>
 * <offsetMsgId> <keys>` per consumed message. It shuts down cleanly when stdin reaches EOF or reads `quit`.
 */
public final class TestConsumer {
  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: TestConsumer NAMESRV GROUP TOPIC[,TOPIC...]");
      System.exit(2);
    }
    DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(args[1]);
    consumer.setNamesrvAddr(args[0]);
    consumer.setInstanceName("mqadmin-test-" + ProcessHandle.current().pid());
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    consumer.setPersistConsumerOffsetInterval(500); // commit offsets quickly so the tests need not wait long
    consumer.setHeartbeatBrokerInterval(1000);
    for (String topic : args[2].split(",")) consumer.subscribe(topic, "*");
    consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
      for (MessageExt m : msgs) {
        String keys = m.getKeys() == null ? "-" : m.getKeys().replace(' ', ',');
        out("MSG " + m.getTopic() + " " + m.getQueueId() + " " + m.getQueueOffset() + " " + m.getMsgId() + " " + keys);
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    consumer.start();
    out("READY " + consumer.buildMQClientId());
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.trim().equals("quit")) break;
    }
    consumer.shutdown(); // persists the consumed offsets and unregisters
    out("STOPPED");
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }

  private static synchronized void out(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
