package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.store.OffsetStore;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Differential probe (tag "diff", not part of "all"): one fixed sequence of admin calls, sends, pulls and offset
 * commits, then a JSON dump of what the server says about it: route, per-queue min/max/search offsets, pull results,
 * consumer offsets, topic status (GET_TOPIC_STATS_INFO, mqadmin topicStatus) and consumer progress
 * (GET_CONSUME_STATS, mqadmin consumerProgress). compat/runner.mjs runs it against an official broker and against
 * ours with the same -DrunId (same topic/group names) and compares the dumps with compat/diff.mjs.
 * <p>
 * Needs -DdiffOut=FILE. Topics are created with UPDATE_AND_CREATE_TOPIC, so it also works with
 * autoCreateTopicEnable=false.
 */
@Tag("diff")
public class DiffProbeTest extends ScenarioBase {
    /** Messages sent to queue 0..3 of topic "a" and how many of them the pull group consumes and commits. */
    static final int[] SENT = {3, 5, 7, 9};
    static final int[] CONSUMED = {2, 5, 0, 4};

    @Test
    void diffProbe() throws Exception {
        String out = System.getProperty("diffOut");
        Assumptions.assumeTrue(out != null && !out.isEmpty(), "needs -DdiffOut=FILE (run by compat/runner.mjs)");
        DefaultMQProducer p = producer();
        MQClientAPIImpl api = AdminApi.api(p);
        String broker = AdminApi.masterAddr(api);
        String topicA = topic("a");
        String topicB = topic("b");
        // a: 4 read / 4 write queues; b: 5 read / 3 write queues (queues 3 and 4 are read-only and stay empty)
        AdminApi.createTopic(api, broker, topicA, 4, 4, 6);
        AdminApi.createTopic(api, broker, topicB, 5, 3, 6);
        awaitRoute(topicA);
        awaitRoute(topicB);

        Map<String, Object> dump = new LinkedHashMap<>();
        Map<String, Object> route = new TreeMap<>();
        route.put("a", AdminApi.tree(api.getTopicRouteInfoFromNameServer(topicA, AdminApi.TIMEOUT_MS)));
        route.put("b", AdminApi.tree(api.getTopicRouteInfoFromNameServer(topicB, AdminApi.TIMEOUT_MS)));
        route.put("publishQueues.a", queueIds(p.fetchPublishMessageQueues(topicA)));
        route.put("publishQueues.b", queueIds(p.fetchPublishMessageQueues(topicB)));
        dump.put("route", route);

        // sends to fixed queues: the offsets the broker assigns
        MessageQueueSelector byId = (mqs, msg, arg) -> {
            for (MessageQueue mq : mqs) {
                if (mq.getQueueId() == (Integer) arg) {
                    return mq;
                }
            }
            throw new IllegalStateException("no queue " + arg + " in " + mqs);
        };
        Map<String, Object> offsets = new TreeMap<>();
        List<String> sendOffsets = new ArrayList<>();
        for (int q = 0; q < SENT.length; q++) {
            for (int i = 0; i < SENT[q]; i++) {
                Message m = new Message(topicA, "T" + (i % 2), "a-" + q + "-" + i, ("body " + q + "/" + i).getBytes(StandardCharsets.UTF_8));
                SendResult r = p.send(m, byId, q);
                assertSendOk(r);
                sendOffsets.add("a/" + r.getMessageQueue().getQueueId() + "@" + r.getQueueOffset());
            }
        }
        for (int i = 0; i < 2; i++) {
            SendResult r = p.send(new Message(topicB, "T", "b-1-" + i, "b".getBytes(StandardCharsets.UTF_8)), byId, 1);
            assertSendOk(r);
            sendOffsets.add("b/" + r.getMessageQueue().getQueueId() + "@" + r.getQueueOffset());
        }
        offsets.put("sendResults", sendOffsets);

        // per-queue min/max offsets and time searches (MQAdmin API of the producer)
        String brokerName = p.fetchPublishMessageQueues(topicA).get(0).getBrokerName();
        Map<String, Object> queues = new TreeMap<>();
        for (String[] t : new String[][] {{"a", topicA, "4"}, {"b", topicB, "5"}}) {
            for (int q = 0; q < Integer.parseInt(t[2]); q++) {
                MessageQueue mq = new MessageQueue(t[1], brokerName, q);
                Map<String, Object> e = new TreeMap<>();
                e.put("min", p.minOffset(mq));
                e.put("max", p.maxOffset(mq));
                e.put("searchOffset(0)", p.searchOffset(mq, 0));
                e.put("searchOffset(now+1h)", p.searchOffset(mq, System.currentTimeMillis() + 3_600_000));
                queues.put(t[0] + "/" + q, e);
            }
        }
        offsets.put("queues", queues);

        // a pull consumer group consumes part of topic a and commits synchronously
        String group = group("pull");
        DefaultMQPullConsumer c = new DefaultMQPullConsumer(group);
        c.setNamesrvAddr(NAMESRV);
        c.setInstanceName(instanceName());
        c.setVipChannelEnabled(false);
        c.start();
        boolean shut = false;
        try {
            OffsetStore store = c.getDefaultMQPullConsumerImpl().getOffsetStore();
            Map<String, Object> pulls = new TreeMap<>();
            for (int q = 0; q < SENT.length; q++) {
                MessageQueue mq = new MessageQueue(topicA, brokerName, q);
                if (CONSUMED[q] == 0) {
                    continue;
                }
                PullResult r = c.pull(mq, "*", 0, CONSUMED[q]);
                Map<String, Object> e = new TreeMap<>();
                e.put("status", r.getPullStatus().name());
                e.put("found", r.getMsgFoundList() == null ? 0 : r.getMsgFoundList().size());
                e.put("nextBeginOffset", r.getNextBeginOffset());
                e.put("minOffset", r.getMinOffset());
                e.put("maxOffset", r.getMaxOffset());
                pulls.put("a/" + q, e);
                store.updateOffset(mq, r.getNextBeginOffset(), false);
                store.updateConsumeOffsetToBroker(mq, r.getNextBeginOffset(), false);
            }
            // tag filter ("T1": odd messages only) on queue 3, from 0, not committed
            PullResult tagged = c.pull(new MessageQueue(topicA, brokerName, 3), "T1", 0, 32);
            Map<String, Object> e = new TreeMap<>();
            e.put("status", tagged.getPullStatus().name());
            e.put("found", tagged.getMsgFoundList() == null ? 0 : tagged.getMsgFoundList().size());
            e.put("nextBeginOffset", tagged.getNextBeginOffset());
            pulls.put("a/3 tag T1", e);
            // past the end of queue 0 and of an empty read-only queue
            for (Object[] t : new Object[][] {{topicA, 0, 100L, "a/0 from 100"}, {topicB, 4, 0L, "b/4 from 0"}}) {
                PullResult r = c.pull(new MessageQueue((String) t[0], brokerName, (Integer) t[1]), "*", (Long) t[2], 32);
                Map<String, Object> x = new TreeMap<>();
                x.put("status", r.getPullStatus().name());
                x.put("nextBeginOffset", r.getNextBeginOffset());
                pulls.put((String) t[3], x);
            }
            offsets.put("pulls", pulls);

            Map<String, Object> committed = new TreeMap<>();
            for (int q = 0; q < SENT.length; q++) {
                committed.put("a/" + q, c.fetchConsumeOffset(new MessageQueue(topicA, brokerName, q), true));
            }
            offsets.put("consumerOffsets", committed);
            c.shutdown();
            shut = true;
        } finally {
            if (!shut) {
                c.shutdown();
            }
        }
        dump.put("offsets", offsets);

        Map<String, Object> topicStatus = new TreeMap<>();
        topicStatus.put("a", AdminApi.tree(api.getTopicStatsInfo(broker, topicA, AdminApi.TIMEOUT_MS)));
        topicStatus.put("b", AdminApi.tree(api.getTopicStatsInfo(broker, topicB, AdminApi.TIMEOUT_MS)));
        dump.put("topicStatus", topicStatus);

        Map<String, Object> progress = new TreeMap<>();
        progress.put("group, all topics", AdminApi.tree(api.getConsumeStats(broker, group, AdminApi.TIMEOUT_MS)));
        progress.put("group, topic a", AdminApi.tree(api.getConsumeStats(broker, group, topicA, AdminApi.TIMEOUT_MS)));
        progress.put("group, topic b", AdminApi.tree(api.getConsumeStats(broker, group, topicB, AdminApi.TIMEOUT_MS)));
        dump.put("consumerProgress", progress);

        Files.write(Path.of(out), (AdminApi.json(dump) + "\n").getBytes(StandardCharsets.UTF_8));
        System.out.println("[compat] diff dump written to " + out);
        assertEquals(SENT.length, ((List<?>) route.get("publishQueues.a")).size(), "publish queues of topic a");
    }

    private static List<Integer> queueIds(List<MessageQueue> mqs) {
        List<Integer> ids = new ArrayList<>();
        for (MessageQueue mq : mqs) {
            ids.add(mq.getQueueId());
        }
        ids.sort(null);
        return ids;
    }
}
