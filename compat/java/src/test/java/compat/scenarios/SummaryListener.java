package compat.scenarios;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Concise console output for run.sh: one line per scenario and a closing "scenarios: N passed, N failed" line.
 * Registered through META-INF/services, so the ConsoleLauncher runs it with --details=none.
 */
public class SummaryListener implements TestExecutionListener {
    private final PrintStream out = System.out;
    private final Map<String, Long> started = new ConcurrentHashMap<>();
    private final List<String> failed = new ArrayList<>();
    private int passed;
    private int skipped;
    private long planStart;

    private static String name(TestIdentifier id) {
        if (id.getSource().isPresent() && id.getSource().get() instanceof MethodSource) {
            MethodSource m = (MethodSource) id.getSource().get();
            String cls = m.getClassName();
            return cls.substring(cls.lastIndexOf('.') + 1) + "#" + m.getMethodName();
        }
        return id.getDisplayName();
    }

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        planStart = System.currentTimeMillis();
        out.println("[compat] namesrv=" + System.getProperty("namesrv", "127.0.0.1:9876") + " runId="
            + ScenarioBase.RUN_ID + " client=" + clientVersion());
    }

    private static String clientVersion() {
        try {
            Class<?> v = Class.forName("org.apache.rocketmq.common.MQVersion");
            int cur = v.getField("CURRENT_VERSION").getInt(null);
            return (String) v.getMethod("getVersionDesc", int.class).invoke(null, cur);
        } catch (Exception e) {
            return "?";
        }
    }

    @Override
    public void executionStarted(TestIdentifier id) {
        if (id.isTest()) {
            started.put(id.getUniqueId(), System.currentTimeMillis());
            out.println("RUN  " + name(id));
            out.flush();
        }
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        if (id.isTest()) {
            skipped++;
            out.println("SKIP " + name(id) + " (" + reason + ")");
        }
    }

    @Override
    public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
        Long t0 = started.remove(id.getUniqueId());
        String took = t0 == null ? "" : String.format(" (%.1fs)", (System.currentTimeMillis() - t0) / 1000.0);
        if (!id.isTest()) {
            if (result.getStatus() != TestExecutionResult.Status.SUCCESSFUL) {
                failed.add(name(id));
                out.println("FAIL " + name(id) + took + ": " + describe(result));
            }
            return;
        }
        if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
            passed++;
            out.println("PASS " + name(id) + took);
        } else if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
            skipped++;
            out.println("SKIP " + name(id) + took + ": " + describe(result));
        } else {
            failed.add(name(id));
            out.println("FAIL " + name(id) + took + ": " + describe(result));
        }
        out.flush();
    }

    private static String describe(TestExecutionResult r) {
        Throwable t = r.getThrowable().orElse(null);
        if (t == null) {
            return String.valueOf(r.getStatus());
        }
        StringBuilder sb = new StringBuilder(String.valueOf(t));
        int shown = 0;
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().startsWith("compat.scenarios") && shown++ < 3) {
                sb.append("\n       at ").append(e);
            }
        }
        for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            sb.append("\n       caused by ").append(c);
        }
        return sb.toString();
    }

    @Override
    public void testPlanExecutionFinished(TestPlan testPlan) {
        out.printf("[compat] took %.1fs%n", (System.currentTimeMillis() - planStart) / 1000.0);
        if (!failed.isEmpty()) {
            out.println("[compat] failed: " + String.join(", ", failed));
        }
        out.println("scenarios: " + passed + " passed, " + failed.size() + " failed" + (skipped > 0 ? ", " + skipped + " skipped" : ""));
        out.flush();
    }
}
