package io.disco.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Runs {@code etcdctl} (the v3 CLI) for {@link EtcdCluster#etcdctl}. */
final class Etcdctl {

    private Etcdctl() {}

    /**
     * Runs etcdctl against {@code endpoint}: the one beside {@code binary} if there is one, else the one
     * on {@code PATH}.
     *
     * @param binary the etcd binary of a local cluster, or null
     * @param endpoint the client URL to talk to
     * @param tls the cluster's certificates, or null for plain HTTP
     * @param args the command
     * @return what etcdctl printed
     * @throws IllegalStateException if etcdctl is missing, fails, or takes longer than 30 s
     */
    static String run(Path binary, String endpoint, EtcdTls tls, String... args) {
        Path ctl = Optional.ofNullable(binary)
                .map(b -> b.resolveSibling("etcdctl"))
                .filter(Files::isExecutable)
                .orElseGet(() -> EtcdBinary.findOnPath("etcdctl"));
        if (ctl == null) {
            throw new IllegalStateException(
                    "etcdctl not found: install it with `apt-get install etcd-client` (Debian/Ubuntu)");
        }
        List<String> cmd = new ArrayList<>(List.of(ctl.toString(), "--endpoints=" + endpoint));
        if (tls != null) {
            cmd.add("--cacert=" + tls.caFile());
            if (tls.clientCertAuth()) {
                cmd.add("--cert=" + tls.clientCertFile());
                cmd.add("--key=" + tls.clientKeyFile());
            }
        }
        cmd.addAll(List.of(args));
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("ETCDCTL_API", "3");
            Process p = pb.start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("etcdctl " + String.join(" ", args) + " did not finish within 30 s");
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(
                        "etcdctl " + String.join(" ", args) + " failed (" + p.exitValue() + "): " + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + ctl, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running etcdctl", e);
        }
    }
}
