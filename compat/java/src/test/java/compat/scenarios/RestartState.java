package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

/**
 * State handed from a "produce" phase to a "consume" phase across a server restart: a properties file given by
 * -DstateFile=PATH. Several restart scenarios may share one file (keys are prefixed with the scenario name).
 */
final class RestartState {
    private RestartState() {
    }

    static Path file() {
        String f = System.getProperty("stateFile");
        assertNotNull(f, "-DstateFile=PATH is required for restart scenarios");
        return Paths.get(f);
    }

    static synchronized void put(String scenario, String key, String value) throws IOException {
        Path f = file();
        Properties p = new Properties();
        if (Files.exists(f)) {
            try (InputStream in = Files.newInputStream(f)) {
                p.load(in);
            }
        }
        p.setProperty(scenario + "." + key, value);
        if (f.getParent() != null) {
            Files.createDirectories(f.getParent());
        }
        try (OutputStream out = Files.newOutputStream(f)) {
            p.store(out, "rocketmq compat restart scenarios");
        }
    }

    static void putList(String scenario, String key, List<String> values) throws IOException {
        put(scenario, key, String.join(",", values));
    }

    static String get(String scenario, String key) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file())) {
            p.load(in);
        }
        String v = p.getProperty(scenario + "." + key);
        assertNotNull(v, scenario + "." + key + " missing in " + file() + " (did the produce phase run?)");
        return v;
    }

    static List<String> getList(String scenario, String key) throws IOException {
        String v = get(scenario, key);
        return v.isEmpty() ? new ArrayList<>() : new ArrayList<>(Arrays.asList(v.split(",")));
    }
}
