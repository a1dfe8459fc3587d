package compat.scenarios;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.impl.MQClientManager;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.exception.RemotingSendRequestException;

/**
 * Admin calls through the stock client's own MQClientAPIImpl (what mqadmin does, without rocketmq-tools on the
 * classpath). The result classes moved packages between 4.9.x and 5.x, so callers use {@code var} and
 * {@link #tree(Object)} instead of naming them; this file compiles against both client lines.
 */
final class AdminApi {
    static final long TIMEOUT_MS = 10_000;

    private AdminApi() {
    }

    /** The MQClientAPIImpl of a started client (producer/consumer): same client id, same instance. */
    static MQClientAPIImpl api(ClientConfig startedClient) {
        return MQClientManager.getInstance().getOrCreateMQClientInstance(startedClient).getMQClientAPIImpl();
    }

    /** Address of the (only) master broker the nameserver knows. */
    static String masterAddr(MQClientAPIImpl api) throws Exception {
        var info = onceMore(() -> api.getBrokerClusterInfo(TIMEOUT_MS));
        List<String> addrs = new ArrayList<>();
        for (var bd : info.getBrokerAddrTable().values()) {
            String a = bd.getBrokerAddrs().get(0L);
            if (a != null) {
                addrs.add(a);
            }
        }
        if (addrs.size() != 1) {
            throw new IllegalStateException("expected one master broker, nameserver lists " + addrs);
        }
        return addrs.get(0);
    }

    interface Call<T> {
        T call() throws Exception;
    }

    /**
     * One more try when the request could not be written: the stock client closes a channel whose call timed out
     * (its own 3 s route refresh on a starved machine: load average 30-40 in a 2026-12-02 CI run), and a request of
     * ours sent on that channel meanwhile fails with "send request to <addr> failed" without reaching the server.
     */
    static <T> T onceMore(Call<T> c) throws Exception {
        try {
            return c.call();
        } catch (RemotingSendRequestException e) {
            return c.call();
        }
    }

    /** UPDATE_AND_CREATE_TOPIC (17) to the broker, as mqadmin updateTopic does. */
    static void createTopic(MQClientAPIImpl api, String brokerAddr, String topic, int read, int write, int perm)
        throws Exception {
        createTopic(api, brokerAddr, topic, read, write, perm, 0);
    }

    /** Like the above with a topicSysFlag (TopicSysFlag: 1 unit, 2 has unit subscription), as mqadmin updateTopic -u. */
    static void createTopic(MQClientAPIImpl api, String brokerAddr, String topic, int read, int write, int perm,
        int sysFlag) throws Exception {
        TopicConfig tc = new TopicConfig(topic, read, write, perm);
        tc.setTopicSysFlag(sysFlag);
        onceMore(() -> {
            api.createTopic(brokerAddr, "TBW102", tc, TIMEOUT_MS);
            return null;
        });
    }

    // ------------------------------------------------------------------ object -> JSON-able tree

    /**
     * Turns a client result object (TopicRouteData, TopicStatsTable, ConsumeStats, ...) into maps, lists and
     * scalars by its public getters, map keys as strings, everything sorted so two dumps compare line by line.
     */
    static Object tree(Object o) {
        return tree(o, 0);
    }

    private static Object tree(Object o, int depth) {
        if (o == null || o instanceof String || o instanceof Number || o instanceof Boolean) {
            return o;
        }
        if (o instanceof Character || o instanceof Enum) {
            return o.toString();
        }
        if (depth > 8) {
            return String.valueOf(o);
        }
        if (o instanceof Map) {
            Map<String, Object> m = new TreeMap<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
                m.put(key(e.getKey()), tree(e.getValue(), depth + 1));
            }
            return m;
        }
        if (o instanceof Collection || o.getClass().isArray()) {
            Collection<?> c = o instanceof Collection ? (Collection<?>) o : Arrays.asList(boxed(o));
            List<Object> l = new ArrayList<>();
            for (Object x : c) {
                l.add(tree(x, depth + 1));
            }
            if (!(o instanceof List)) {
                l.sort(Comparator.comparing(AdminApi::json));
            }
            return l;
        }
        if (!o.getClass().getName().startsWith("org.apache.rocketmq.")) {
            return String.valueOf(o);
        }
        Map<String, Object> m = new TreeMap<>();
        for (Method g : o.getClass().getMethods()) {
            String n = g.getName();
            if (g.getParameterCount() != 0 || Modifier.isStatic(g.getModifiers()) || g.getDeclaringClass() == Object.class) {
                continue;
            }
            String prop;
            if (n.startsWith("get") && n.length() > 3) {
                prop = Character.toLowerCase(n.charAt(3)) + n.substring(4);
            } else if (n.startsWith("is") && n.length() > 2 && (g.getReturnType() == boolean.class || g.getReturnType() == Boolean.class)) {
                prop = Character.toLowerCase(n.charAt(2)) + n.substring(3);
            } else {
                continue;
            }
            try {
                m.put(prop, tree(g.invoke(o), depth + 1));
            } catch (Exception e) {
                m.put(prop, "<" + e.getClass().getSimpleName() + ">");
            }
        }
        return m;
    }

    /** Map keys: a MessageQueue as "topic/brokerName/queueId", anything else by toString. */
    private static String key(Object k) {
        if (k instanceof MessageQueue) {
            MessageQueue mq = (MessageQueue) k;
            return mq.getTopic() + "/" + mq.getBrokerName() + "/" + mq.getQueueId();
        }
        return String.valueOf(k);
    }

    private static Object[] boxed(Object array) {
        int n = java.lang.reflect.Array.getLength(array);
        Object[] out = new Object[n];
        for (int i = 0; i < n; i++) {
            out[i] = java.lang.reflect.Array.get(array, i);
        }
        return out;
    }

    // ------------------------------------------------------------------ minimal JSON writer

    static String json(Object o) {
        StringBuilder sb = new StringBuilder();
        write(sb, o, "");
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object o, String indent) {
        if (o == null) {
            sb.append("null");
        } else if (o instanceof Number || o instanceof Boolean) {
            if (o instanceof Double && (((Double) o).isNaN() || ((Double) o).isInfinite())) {
                sb.append('"').append(o).append('"');
            } else {
                sb.append(o);
            }
        } else if (o instanceof Map) {
            Map<?, ?> m = (Map<?, ?>) o;
            if (m.isEmpty()) {
                sb.append("{}");
                return;
            }
            sb.append("{\n");
            String in = indent + "  ";
            int i = 0;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                sb.append(in);
                str(sb, String.valueOf(e.getKey()));
                sb.append(": ");
                write(sb, e.getValue(), in);
                sb.append(++i < m.size() ? ",\n" : "\n");
            }
            sb.append(indent).append('}');
        } else if (o instanceof List) {
            List<?> l = (List<?>) o;
            if (l.isEmpty()) {
                sb.append("[]");
                return;
            }
            sb.append("[\n");
            String in = indent + "  ";
            for (int i = 0; i < l.size(); i++) {
                sb.append(in);
                write(sb, l.get(i), in);
                sb.append(i + 1 < l.size() ? ",\n" : "\n");
            }
            sb.append(indent).append(']');
        } else {
            str(sb, String.valueOf(o));
        }
    }

    private static void str(StringBuilder sb, String s) {
        sb.append('"');
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (ch < 0x20) {
                        sb.append(String.format("\\u%04x", (int) ch));
                    } else {
                        sb.append(ch);
                    }
            }
        }
        sb.append('"');
    }
}
