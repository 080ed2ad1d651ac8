package io.disco.cli;

import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code disco}, the operations tool: {@code list}, {@code holders}, {@code break}, {@code leftovers} and
 * {@code watch} on any lock, read/write lock, semaphore or election name, against etcd, with etcdctl's connection
 * flags, against ZooKeeper ({@code --backend zookeeper --connect <connect string>}), or against Redis
 * ({@code --backend redis --redis-uri redis://host:port}). Run {@code ./disco --help} from a checkout, or {@code java -jar disco-cli-<version>-all.jar --help}.
 * The exit codes are listed in the usage text.
 */
@Command(
        name = "disco",
        mixinStandardHelpOptions = true,
        version = "disco (disco for Java) operations tool",
        subcommands = {
            ListCommand.class,
            HoldersCommand.class,
            BreakCommand.class,
            LeftoversCommand.class,
            WatchCommand.class,
            CommandLine.HelpCommand.class
        },
        description = "Operate disco's locks, read/write locks, semaphores and elections on etcd, ZooKeeper or Redis.",
        footer = {
            "%nConnection flags (every command): --endpoints, --cacert, --cert, --key, --user, --password, --command-timeout, "
                    + "as etcdctl's (ETCDCTL_ENDPOINTS, ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY, ETCDCTL_USER, ETCDCTL_PASSWORD "
                    + "are read as defaults). On ZooKeeper: --backend zookeeper --connect HOST:PORT[,HOST:PORT...][/CHROOT] "
                    + "(and --command-timeout); etcd's flags are refused there, --connect without it. On Redis: --backend redis "
                    + "--redis-uri redis://HOST:PORT (rediss:// for TLS, redis-sentinel://HOST:PORT[,...]#MASTER; and "
                    + "--command-timeout).",
            "%n" + ExitCode.FOOTER
        })
public final class DiscoCli implements Runnable {

    private final InputStream in;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private DiscoCli(InputStream in) {
        this.in = in;
    }

    /**
     * Runs the tool and exits the JVM with its exit code.
     *
     * @param args the command line, for example {@code holders /locks/orders --endpoints 10.0.0.1:2379}, or
     *     {@code holders /locks/orders --backend zookeeper --connect 10.0.0.1:2181}
     */
    public static void main(String[] args) {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            // jetcd and gRPC log their reconnection attempts at INFO: the tool says what went wrong itself
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        }
        for (String logger : new String[] {"org.apache.zookeeper", "org.apache.curator", "io.lettuce"}) {
            // ZooKeeper's client and Curator log every failed connection attempt at ERROR, with a stack trace (an
            // unknown host, a refused port, a lost connection): the tool says once what went wrong and why
            System.getProperties().putIfAbsent("org.slf4j.simpleLogger.log." + logger, "off");
        }
        System.exit(run(args, System.out, System.err, System.in));
    }

    /**
     * Runs the tool in this JVM: output to {@code out}, messages to {@code err}, the confirmation of
     * {@code break} read from {@code in}. Interrupting the calling thread ends {@code watch}.
     *
     * @param args the command line
     * @param out where results go
     * @param err where errors and usage go
     * @param in where the confirmation is read
     * @return the exit code (0 done; 1 etcd or ZooKeeper error; 2 bad arguments; 3 nothing holds the name; 4 no answer
     *     from the cluster in time; 5 break deleted nothing)
     */
    public static int run(String[] args, PrintStream out, PrintStream err, InputStream in) {
        CommandLine cl = new CommandLine(new DiscoCli(in));
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setOut(new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), true));
        cl.setErr(new PrintWriter(new OutputStreamWriter(err, StandardCharsets.UTF_8), true));
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            PrintWriter w = commandLine.getErr();
            if (e instanceof CliFailure f) {
                w.println("disco: " + f.getMessage());
                w.flush();
                return f.exitCode();
            }
            w.println("disco: " + e);
            e.printStackTrace(w);
            w.flush();
            return ExitCode.FAILED;
        });
        int code = cl.execute(args);
        cl.getOut().flush();
        cl.getErr().flush();
        return code;
    }

    /** The confirmation input of {@code break}. */
    InputStream in() {
        return in;
    }

    /** {@code disco} alone: the usage. */
    @Override
    public void run() {
        throw new CommandLine.ParameterException(
                spec.commandLine(), "name a command: list, holders, break, leftovers or watch");
    }
}
