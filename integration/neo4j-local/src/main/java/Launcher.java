import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.server.CommunityBootstrapper;

/**
 * Runs Neo4j Community 5.26.x in-process, the same way the packaged server does
 * (`neo4j console`), without Docker or a tarball: Bolt, the HTTP API and Neo4j Browser.
 *
 * <p>Usage: {@code java -cp 'classes:lib/*' Launcher <home> [boltPort [httpPort]]}
 *
 * <p>Why {@link CommunityBootstrapper} rather than {@code DatabaseManagementServiceBuilder}: it is
 * what {@code org.neo4j.server.CommunityEntryPoint}, the main class of the Neo4j distribution,
 * runs, so this instance behaves like the packaged server and the Docker image: server-mode
 * defaults, conf/neo4j.conf, the server's log files (neo4j.log, debug.log, http.log,
 * query.log), memory sanity checks, SIGTERM/SIGINT handlers (System.exit(0)) and a shutdown
 * hook that stops the DBMS cleanly. (With neo4j-server on the classpath the plain builder also
 * starts the HTTP server in 5.26, but with embedded defaults and no signal handling.) The web
 * server's browser module serves the {@code browser/} resources of the neo4j-browser jar on
 * the classpath at /browser/.
 *
 * <p>Ports: args win, then env NEO4J_LOCAL_BOLT_PORT / NEO4J_LOCAL_HTTP_PORT, then 7687 / 7474.
 * Everything listens on 127.0.0.1 only. Data lives in {@code <home>/data}, logs in
 * {@code <home>/logs}. {@code <home>/conf/neo4j.conf} (created empty on first start) is read
 * first, for extra settings; the settings below override it.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args[0].isBlank() || args[0].startsWith("-")) {
            System.err.println("usage: Launcher <home> [boltPort [httpPort]]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath().normalize();
        int boltPort = port(args, 1, "NEO4J_LOCAL_BOLT_PORT", 7687);
        int httpPort = port(args, 2, "NEO4J_LOCAL_HTTP_PORT", 7474);
        String host = "127.0.0.1";

        Path confDir = home.resolve("conf");
        Files.createDirectories(confDir);
        Path confFile = confDir.resolve("neo4j.conf");
        if (Files.notExists(confFile)) {
            Files.writeString(confFile, "# Extra Neo4j settings for scripts/neo4j-local (one name=value a line).\n"
                    + "# Ports, addresses, auth, directories and memory are set by Launcher.java and win over this file.\n");
        }
        Files.createDirectories(home.resolve("data"));
        Files.createDirectories(home.resolve("logs"));

        Map<String, String> cfg = new LinkedHashMap<>();
        cfg.put("server.default_listen_address", host);
        cfg.put("server.default_advertised_address", host);
        cfg.put("server.bolt.enabled", "true");
        cfg.put("server.bolt.listen_address", host + ":" + boltPort);
        cfg.put("server.bolt.advertised_address", host + ":" + boltPort);
        cfg.put("server.bolt.tls_level", "DISABLED");
        cfg.put("server.http.enabled", "true");
        cfg.put("server.http.listen_address", host + ":" + httpPort);
        cfg.put("server.http.advertised_address", host + ":" + httpPort);
        cfg.put("server.https.enabled", "false");
        cfg.put("dbms.security.auth_enabled", "false");
        cfg.put("dbms.usage_report.enabled", "false");
        cfg.put("client.allow_telemetry", "false"); // Neo4j Browser's own usage reporting
        // Browser styles the execution graph with ctxgraph's stylesheet, which `make run`'s
        // ctxgraph serves (CTXGRAPH_ADDR, 127.0.0.1:8080 by default).
        String ctxgraph = env("CTXGRAPH_ADDR", "127.0.0.1:8080");
        cfg.put("browser.remote_content_hostname_whitelist", "127.0.0.1,localhost," + ctxgraph.replaceAll(":\\d+$", ""));
        cfg.put("browser.post_connect_cmd", "style http://" + ctxgraph + "/browser/ctxgraph.grass");
        cfg.put("server.directories.data", home.resolve("data").toString());
        cfg.put("server.directories.logs", home.resolve("logs").toString());
        cfg.put("server.directories.run", home.resolve("run").toString());
        cfg.put("server.directories.import", home.resolve("import").toString());
        cfg.put("server.directories.plugins", home.resolve("plugins").toString());
        // Modest memory: the JVM heap itself is capped by -Xmx from scripts/neo4j-local.
        cfg.put("server.memory.pagecache.size", env("NEO4J_LOCAL_PAGECACHE", "256m"));
        cfg.put("server.memory.heap.max_size", heapFromJvm());
        cfg.put("dbms.memory.transaction.total.max", env("NEO4J_LOCAL_TX_MEMORY", "512m"));
        // A dev instance: keep little transaction log around.
        cfg.put("db.tx_log.rotation.retention_policy", "2 files");
        cfg.put("db.tx_log.rotation.size", "64M");
        cfg.put("db.tx_log.preallocate", "false");
        // Bolt otherwise waits 5 s + 5 s for idle connections / its thread pool on shutdown.
        cfg.put("internal.server.bolt.connection_shutdown_wait_time", "2s");
        cfg.put("internal.server.bolt.thread_pool_shutdown_wait_time", "1s");

        System.out.printf("neo4j-local: home=%s bolt=%s:%d http=%s:%d%n", home, host, boltPort, host, httpPort);

        CountDownLatch forever = new CountDownLatch(1);
        CommunityBootstrapper server = new CommunityBootstrapper();
        // (homeDir, configFile, overrides, expandCommands, daemonMode). daemonMode=false is
        // `neo4j console`: the user log goes to stdout (scripts/neo4j-local sends that to
        // logs/launcher.log); debug.log, http.log, query.log stay in <home>/logs.
        int rc;
        try {
            rc = server.start(home, confFile, cfg, false, false);
        } catch (RuntimeException e) {
            e.printStackTrace();
            rc = 1;
        }
        if (rc != 0) {
            System.err.println("neo4j-local: Neo4j failed to start, exit code " + rc);
            System.exit(rc);
        }
        System.out.printf("neo4j-local: READY bolt://%s:%d http://%s:%d/browser/%n", host, boltPort, host, httpPort);
        // SIGTERM/SIGINT -> System.exit(0) (bootstrapper's handler) -> its shutdown hook stops
        // the DBMS. Until then, keep the main thread parked.
        forever.await();
    }

    private static int port(String[] args, int index, String envName, int dflt) {
        String raw = args.length > index ? args[index] : System.getenv(envName);
        if (raw == null || raw.isBlank()) {
            return dflt;
        }
        try {
            int p = Integer.parseInt(raw.trim());
            if (p < 1 || p > 65535) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            System.err.println("neo4j-local: invalid port for " + envName + ": " + raw);
            System.exit(2);
            return -1;
        }
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : v.trim();
    }

    private static String heapFromJvm() {
        long max = Runtime.getRuntime().maxMemory();
        return max == Long.MAX_VALUE ? "1g" : Math.max(1, max / (1024 * 1024)) + "m";
    }
}
