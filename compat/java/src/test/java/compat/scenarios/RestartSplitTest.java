package compat.scenarios;

import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * 10a. "Server restarted between producing and consuming". Two phases, run by the harness around a restart:
 * <pre>
 *   run.sh RestartSplitTest -Dphase=produce -DstateFile=F -Dnamesrv=...   # sends N, writes topic + keys to F
 *   (restart the server)
 *   run.sh RestartSplitTest -Dphase=consume -DstateFile=F -Dnamesrv=...   # consumes from first offset, expects all keys
 * </pre>
 * -DrestartMessages=N (default 50).
 */
@Tag("restart")
public class RestartSplitTest extends ScenarioBase {
    private static final String S = "restartSplit";

    @Test
    @EnabledIfSystemProperty(named = "phase", matches = "produce")
    void restartSplitProduce() throws Exception {
        String topic = topic();
        int n = Integer.getInteger("restartMessages", 50);
        DefaultMQProducer p = producer();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String key = "rk" + i;
            assertSendOk(p.send(msg(topic, "Rs", key, "restart body " + i)));
            keys.add(key);
        }
        RestartState.put(S, "topic", topic);
        RestartState.putList(S, "keys", keys);
    }

    @Test
    @EnabledIfSystemProperty(named = "phase", matches = "consume")
    void restartSplitConsume() throws Exception {
        String topic = RestartState.get(S, "topic");
        List<String> keys = RestartState.getList(S, "keys");
        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("consume after restart", rec, keys);
        for (String k : keys) {
            MessageExt m = rec.first(k);
            assertEquals("restart body " + k.substring(2), body(m));
            assertEquals("Rs", m.getTags());
        }
    }
}
