package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.Set;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.junit.jupiter.api.Test;

/**
 * The nameserver's unit topic lists (GET_UNIT_TOPIC_LIST 311, GET_HAS_UNIT_SUB_TOPIC_LIST 312,
 * GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST 313; MQAdminExt.getUnitTopics and friends), from the topicSysFlag a topic is
 * created with at the broker (mqadmin updateTopic -u) and registered with.
 */
public class UnitTopicListTest extends ScenarioBase {
    @Test
    void topicsAreListedByTheirUnitFlags() throws Exception {
        DefaultMQProducer p = producer();
        MQClientAPIImpl api = AdminApi.api(p);
        String broker = AdminApi.masterAddr(api);
        String unit = topic("unit");
        String sub = topic("sub");
        String both = topic("both");
        String plain = topic("plain");
        AdminApi.createTopic(api, broker, unit, 1, 1, 6, 1);
        AdminApi.createTopic(api, broker, sub, 1, 1, 6, 2);
        AdminApi.createTopic(api, broker, both, 1, 1, 6, 3);
        AdminApi.createTopic(api, broker, plain, 1, 1, 6, 0);

        // the broker registers created topics with the nameserver on its own schedule: wait for the last one
        long deadline = System.currentTimeMillis() + WAIT_MS;
        Set<String> units;
        while (!(units = api.getUnitTopicList(false, AdminApi.TIMEOUT_MS).getTopicList()).containsAll(Set.of(unit, both))) {
            if (System.currentTimeMillis() > deadline) fail("unit topics never listed: " + units);
            sleep(100);
        }
        assertFalse(units.contains(sub) || units.contains(plain), "unit list " + units);
        Set<String> hasSub = api.getHasUnitSubTopicList(false, AdminApi.TIMEOUT_MS).getTopicList();
        assertTrue(hasSub.containsAll(Set.of(sub, both)) && !hasSub.contains(unit) && !hasSub.contains(plain), "has-unit-sub list " + hasSub);
        Set<String> subOnly = api.getHasUnitSubUnUnitTopicList(false, AdminApi.TIMEOUT_MS).getTopicList();
        assertTrue(subOnly.contains(sub) && !subOnly.contains(both) && !subOnly.contains(unit), "has-unit-sub, not unit " + subOnly);
    }
}
