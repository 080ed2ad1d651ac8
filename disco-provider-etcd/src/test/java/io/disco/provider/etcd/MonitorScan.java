package io.disco.provider.etcd;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Handle;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LineNumberNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.TryCatchBlockNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;
import org.objectweb.asm.tree.analysis.Analyzer;
import org.objectweb.asm.tree.analysis.AnalyzerException;
import org.objectweb.asm.tree.analysis.Frame;
import org.objectweb.asm.tree.analysis.SourceInterpreter;
import org.objectweb.asm.tree.analysis.SourceValue;

/**
 * A static scan of the library's bytecode for a monitor held across a call that can block: a
 * {@code synchronized} method or block, or a class initializer (a virtual thread waiting for another
 * thread's class initialization pins its carrier even on JDK 25), inside which some path of calls
 * reaches a blocking wait of the JDK ({@link #BLOCKING}: {@code Object.wait}, parking, sleeping,
 * {@code Future.get}, {@code CompletableFuture.join}, {@code Lock.lock}, {@code Condition.await},
 * latches, blocking queues, stream and socket I/O, host name lookups...). On JDK 21 a virtual thread
 * that blocks in a {@code synchronized} block pins its carrier thread; since JDK 24 (JEP 491) it does
 * not, so a run on a newer JDK cannot show it and this scan does.
 *
 * <p>How far it sees: calls between the scanned classes are followed transitively, a virtual call to
 * every override in the scanned classes (class hierarchy analysis), and a call of a functional interface
 * ({@code Runnable.run}, {@code Supplier.get}, or one of the library's) to the lambdas and method
 * references its receiver may be, traced back to where they were made (where the trace is lost, to every
 * one made in the scanned classes for that interface). It does not follow a call into code it was not
 * given (jetcd, gRPC, users' callbacks), nor the dependents that {@code CompletableFuture.complete} runs
 * inline (the library completes users' futures on an executor of theirs, never inline).
 */
final class MonitorScan {

    /** The blocking methods of a lock (of {@code Lock} and each of the JDK's). */
    private static final Set<String> LOCK_WAITS =
            Set.of("lock", "lockInterruptibly", "tryLock(JLjava/util/concurrent/TimeUnit;)Z");
    /** The blocking methods of an executor (of {@code ExecutorService} and each of the JDK's). */
    private static final Set<String> EXECUTOR_WAITS = Set.of("awaitTermination", "invokeAll", "invokeAny", "close");
    /** The blocking methods of a blocking queue, as the JDK's queues declare them. */
    private static final Set<String> QUEUE_WAITS =
            Set.of("put", "take", "poll(JLjava/util/concurrent/TimeUnit;)Ljava/lang/Object;");
    /** The blocking methods of a blocking deque. */
    private static final Set<String> DEQUE_WAITS =
            Set.of("put", "take", "putFirst", "putLast", "takeFirst", "takeLast");

    /** Owner (internal name) to the names of its methods that block the calling thread; "*" = any descriptor. */
    static final Map<String, Set<String>> BLOCKING = Map.ofEntries(
            Map.entry("java/lang/Object", Set.of("wait")),
            Map.entry("java/lang/Thread", Set.of("sleep", "join")),
            Map.entry("java/lang/Process", Set.of("waitFor")),
            Map.entry("java/util/concurrent/TimeUnit", Set.of("sleep", "timedJoin", "timedWait")),
            Map.entry("java/util/concurrent/locks/LockSupport", Set.of("park", "parkNanos", "parkUntil")),
            Map.entry("java/util/concurrent/Future", Set.of("get")),
            Map.entry("java/util/concurrent/FutureTask", Set.of("get")),
            Map.entry("java/util/concurrent/CompletableFuture", Set.of("get", "join")),
            Map.entry("java/util/concurrent/ForkJoinTask", Set.of("get", "join", "invoke")),
            Map.entry("java/util/concurrent/locks/Lock", LOCK_WAITS),
            Map.entry("java/util/concurrent/locks/ReentrantLock", LOCK_WAITS),
            Map.entry("java/util/concurrent/locks/ReentrantReadWriteLock$ReadLock", LOCK_WAITS),
            Map.entry("java/util/concurrent/locks/ReentrantReadWriteLock$WriteLock", LOCK_WAITS),
            Map.entry(
                    "java/util/concurrent/locks/StampedLock",
                    Set.of(
                            "readLock",
                            "writeLock",
                            "readLockInterruptibly",
                            "writeLockInterruptibly",
                            "tryReadLock(JLjava/util/concurrent/TimeUnit;)J",
                            "tryWriteLock(JLjava/util/concurrent/TimeUnit;)J")),
            Map.entry(
                    "java/util/concurrent/locks/Condition",
                    Set.of("await", "awaitNanos", "awaitUninterruptibly", "awaitUntil")),
            Map.entry("java/util/concurrent/CountDownLatch", Set.of("await")),
            Map.entry("java/util/concurrent/CyclicBarrier", Set.of("await")),
            Map.entry(
                    "java/util/concurrent/Semaphore",
                    Set.of(
                            "acquire",
                            "acquireUninterruptibly",
                            "tryAcquire(JLjava/util/concurrent/TimeUnit;)Z",
                            "tryAcquire(IJLjava/util/concurrent/TimeUnit;)Z")),
            Map.entry(
                    "java/util/concurrent/Phaser",
                    Set.of("awaitAdvance", "awaitAdvanceInterruptibly", "arriveAndAwaitAdvance")),
            Map.entry("java/util/concurrent/Exchanger", Set.of("exchange")),
            Map.entry(
                    "java/util/concurrent/BlockingQueue",
                    Set.of(
                            "put",
                            "take",
                            "poll(JLjava/util/concurrent/TimeUnit;)Ljava/lang/Object;",
                            "offer(Ljava/lang/Object;JLjava/util/concurrent/TimeUnit;)Z")),
            Map.entry("java/util/concurrent/BlockingDeque", DEQUE_WAITS),
            Map.entry("java/util/concurrent/LinkedBlockingQueue", QUEUE_WAITS),
            Map.entry("java/util/concurrent/ArrayBlockingQueue", QUEUE_WAITS),
            Map.entry("java/util/concurrent/LinkedBlockingDeque", DEQUE_WAITS),
            Map.entry("java/util/concurrent/SynchronousQueue", QUEUE_WAITS),
            Map.entry(
                    "java/util/concurrent/LinkedTransferQueue",
                    Set.of(
                            "put",
                            "take",
                            "transfer",
                            "tryTransfer(Ljava/lang/Object;JLjava/util/concurrent/TimeUnit;)Z")),
            Map.entry("java/util/concurrent/ExecutorService", EXECUTOR_WAITS),
            Map.entry("java/util/concurrent/ThreadPoolExecutor", EXECUTOR_WAITS),
            Map.entry("java/util/concurrent/ScheduledThreadPoolExecutor", EXECUTOR_WAITS),
            Map.entry(
                    "java/util/concurrent/ForkJoinPool",
                    Set.of("awaitTermination", "invokeAll", "invokeAny", "close", "awaitQuiescence")),
            Map.entry(
                    "java/util/concurrent/ExecutorCompletionService",
                    Set.of("take", "poll(JLjava/util/concurrent/TimeUnit;)Ljava/util/concurrent/Future;")),
            Map.entry("java/io/InputStream", Set.of("read", "readAllBytes", "readNBytes", "transferTo")),
            Map.entry("java/io/OutputStream", Set.of("write", "flush")),
            Map.entry("java/io/Reader", Set.of("read")),
            Map.entry("java/io/BufferedReader", Set.of("read", "readLine")),
            Map.entry("java/io/Writer", Set.of("write", "flush")),
            Map.entry("java/net/Socket", Set.of("connect")),
            Map.entry("java/net/ServerSocket", Set.of("accept")),
            Map.entry(
                    "java/net/InetAddress",
                    Set.of(
                            "getLocalHost",
                            "getByName",
                            "getAllByName",
                            "getHostName",
                            "getCanonicalHostName",
                            "isReachable")), // name lookups
            Map.entry(
                    "java/nio/file/Files",
                    Set.of(
                            "write",
                            "writeString",
                            "readAllBytes",
                            "readString",
                            "readAllLines",
                            "copy",
                            "move",
                            "delete",
                            "createFile",
                            "newInputStream",
                            "newOutputStream")),
            Map.entry("java/nio/channels/FileChannel", Set.of("read", "write", "force", "lock")));

    /** Methods of the JDK that run the lambdas given to them on the calling thread, before they return. */
    static final Set<String> RUN_INLINE = Set.of(
            "forEach",
            "forEachRemaining",
            "computeIfAbsent",
            "computeIfPresent",
            "compute",
            "merge",
            "removeIf",
            "replaceAll",
            "ifPresent",
            "ifPresentOrElse",
            "orElseGet",
            "orElseThrow",
            "map",
            "flatMap",
            "filter",
            "anyMatch",
            "allMatch",
            "noneMatch",
            "sort",
            "collect",
            "reduce",
            "toArray",
            "findFirst",
            "findAny",
            "count",
            "min",
            "max",
            "getAndUpdate",
            "updateAndGet",
            "getAndAccumulate",
            "accumulateAndGet");

    /** One call made while a monitor is held that can block, and the chain of calls down to the blocking one. */
    record Finding(String method, String source, int line, List<String> chain) {
        @Override
        public String toString() {
            return method + " (" + source + ":" + line + ") holds a monitor while calling "
                    + String.join(" -> ", chain);
        }
    }

    private record MethodId(String owner, String name, String desc) {
        @Override
        public String toString() {
            return owner.replace('/', '.') + "." + name + shortDesc(desc);
        }

        private static String shortDesc(String desc) {
            Type[] args = Type.getArgumentTypes(desc);
            return "("
                    + String.join(
                            ", ",
                            Arrays.stream(args)
                                    .map(t -> {
                                        String n = t.getClassName();
                                        return n.substring(n.lastIndexOf('.') + 1);
                                    })
                                    .toList())
                    + ")";
        }
    }

    /** Instruction {@code index} of {@code in}, a call. */
    private record CallSite(MethodId in, int index, MethodInsnNode call) {}

    private final Map<String, ClassNode> classes = new LinkedHashMap<>();
    private final Map<MethodId, MethodNode> methods = new HashMap<>();
    /** Scanned class to its scanned subclasses and implementations, direct and indirect. */
    private final Map<String, Set<String>> subtypes = new HashMap<>();
    /** Interface (internal name + "." + method name) to the methods behind the lambdas the scanned code makes for it. */
    private final Map<String, Set<MethodId>> lambdas = new HashMap<>();
    /** The lambda (or method reference) that each invokedynamic instruction of the scanned code makes. */
    private final Map<InvokeDynamicInsnNode, MethodId> lambdaAt = new HashMap<>();
    /** A scanned method to the calls of it in the scanned code. */
    private final Map<MethodId, List<CallSite>> callers = new HashMap<>();

    private final Map<MethodId, Frame<SourceValue>[]> frames = new HashMap<>();
    /** {@link #lambdasOf} by call ("method#index"). */
    private final Map<String, Set<MethodId>> receivers = new HashMap<>();

    /** A blocking scanned method to the next call on its way down to the JDK's blocking method. */
    private final Map<MethodId, String> blockingVia = new HashMap<>();

    /** Scans the classes whose path starts with {@code packagePrefix} (such as {@code "io/disco/"}) in {@code roots}, directories or jars. */
    static MonitorScan of(List<Path> roots, String packagePrefix) {
        MonitorScan scan = new MonitorScan();
        for (Path root : roots) {
            scan.read(root, packagePrefix);
        }
        scan.link();
        return scan;
    }

    /** The directory or jar that {@code c} was loaded from. */
    static Path codeSource(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    Set<String> classNames() {
        Set<String> names = new TreeSet<>();
        classes.keySet().forEach(n -> names.add(n.replace('/', '.')));
        return names;
    }

    private void read(Path root, String packagePrefix) {
        try {
            if (Files.isDirectory(root)) {
                try (Stream<Path> files = Files.walk(root)) {
                    for (Path p : (Iterable<Path>) files::iterator) {
                        String rel = root.relativize(p).toString().replace('\\', '/');
                        if (rel.startsWith(packagePrefix) && rel.endsWith(".class")) {
                            try (InputStream in = Files.newInputStream(p)) {
                                add(in);
                            }
                        }
                    }
                }
            } else {
                try (JarFile jar = new JarFile(root.toFile())) {
                    var entries = jar.entries();
                    while (entries.hasMoreElements()) {
                        var e = entries.nextElement();
                        if (e.getName().startsWith(packagePrefix) && e.getName().endsWith(".class")) {
                            try (InputStream in = jar.getInputStream(e)) {
                                add(in);
                            }
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the classes in " + root, e);
        }
    }

    private void add(InputStream in) throws IOException {
        ClassNode node = new ClassNode();
        new ClassReader(in).accept(node, 0);
        classes.put(node.name, node);
        for (MethodNode m : node.methods) {
            methods.put(new MethodId(node.name, m.name, m.desc), m);
        }
    }

    private void link() {
        for (ClassNode c : classes.values()) {
            List<String> supers = new ArrayList<>(c.interfaces);
            if (c.superName != null) {
                supers.add(c.superName);
            }
            Deque<String> up = new ArrayDeque<>(supers);
            Set<String> seen = new HashSet<>();
            while (!up.isEmpty()) {
                String s = up.pop();
                if (!seen.add(s)) {
                    continue;
                }
                subtypes.computeIfAbsent(s, k -> new HashSet<>()).add(c.name);
                ClassNode sc = classes.get(s);
                if (sc != null) {
                    up.addAll(sc.interfaces);
                    if (sc.superName != null) {
                        up.add(sc.superName);
                    }
                }
            }
            for (MethodNode m : c.methods) {
                for (AbstractInsnNode insn : m.instructions) {
                    if (insn instanceof InvokeDynamicInsnNode indy
                            && indy.bsmArgs.length >= 2
                            && indy.bsmArgs[1] instanceof Handle impl) {
                        String iface = Type.getReturnType(indy.desc).getInternalName();
                        MethodId target = new MethodId(impl.getOwner(), impl.getName(), impl.getDesc());
                        lambdas.computeIfAbsent(iface + "." + indy.name, k -> new HashSet<>())
                                .add(target);
                        lambdaAt.put(indy, target);
                    }
                }
            }
        }
        for (Map.Entry<MethodId, MethodNode> e : methods.entrySet()) {
            AbstractInsnNode[] insns = e.getValue().instructions.toArray();
            for (int i = 0; i < insns.length; i++) {
                if (insns[i] instanceof MethodInsnNode call) {
                    for (MethodId target : declaredTargets(call)) {
                        callers.computeIfAbsent(target, k -> new ArrayList<>()).add(new CallSite(e.getKey(), i, call));
                    }
                }
            }
        }
        // Fixpoint: a scanned method blocks if it calls a blocking method of the JDK or a scanned one that blocks.
        boolean changed = true;
        while (changed) {
            changed = false;
            for (Map.Entry<MethodId, MethodNode> e : methods.entrySet()) {
                if (blockingVia.containsKey(e.getKey())) {
                    continue;
                }
                AbstractInsnNode[] insns = e.getValue().instructions.toArray();
                for (int i = 0; i < insns.length; i++) {
                    String via = insns[i] instanceof MethodInsnNode call ? blocks(e.getKey(), i, call) : null;
                    if (via != null) {
                        blockingVia.put(e.getKey(), via);
                        changed = true;
                        break;
                    }
                }
            }
        }
    }

    /** Whether {@code call}, instruction {@code index} of {@code in}, can block: the name of the method it may reach that blocks, or null. */
    private String blocks(MethodId in, int index, MethodInsnNode call) {
        Set<String> jdk = BLOCKING.get(call.owner);
        if (jdk != null && (jdk.contains(call.name) || jdk.contains(call.name + call.desc))) {
            return call.owner.replace('/', '.') + "." + call.name;
        }
        for (MethodId target : targets(in, index, call)) {
            Set<String> jdkTarget = BLOCKING.get(target.owner());
            if (blockingVia.containsKey(target)
                    || jdkTarget != null
                            && (jdkTarget.contains(target.name())
                                    || jdkTarget.contains(target.name() + target.desc()))) {
                return target.toString();
            }
        }
        return null;
    }

    /**
     * The methods {@code call} may run: its scanned target, inherited or overridden, and the lambdas and
     * method references of the scanned code that its receiver may be ({@link #lambdasOf}).
     */
    private Set<MethodId> targets(MethodId in, int index, MethodInsnNode call) {
        Set<MethodId> out = declaredTargets(call);
        if (call.getOpcode() == Opcodes.INVOKEINTERFACE && lambdas.containsKey(call.owner + "." + call.name)) {
            out.addAll(lambdasOf(in, index, call));
        }
        return out;
    }

    /** The scanned methods {@code call} names: its target, inherited, or an override of it. */
    private Set<MethodId> declaredTargets(MethodInsnNode call) {
        Set<MethodId> out = new HashSet<>();
        if (classes.containsKey(call.owner)) {
            // the declaration itself, or the one inherited from a scanned superclass
            String c = call.owner;
            while (c != null && classes.containsKey(c)) {
                MethodId id = new MethodId(c, call.name, call.desc);
                if (methods.containsKey(id)) {
                    out.add(id);
                    break;
                }
                c = classes.get(c).superName;
            }
        }
        if (call.getOpcode() != Opcodes.INVOKESTATIC && call.getOpcode() != Opcodes.INVOKESPECIAL) {
            for (String sub : subtypes.getOrDefault(call.owner, Set.of())) {
                MethodId id = new MethodId(sub, call.name, call.desc);
                if (methods.containsKey(id)) {
                    out.add(id);
                }
            }
        }
        return out;
    }

    /**
     * The lambdas and method references that the receiver of {@code call} (instruction {@code index} of
     * {@code in}) may be: followed back through locals, casts, and the parameters of the method to the
     * arguments of its calls in the scanned code, into the scanned methods that return it and to the
     * stores of the fields it is read from, to the {@code invokedynamic} that made it. Where the trail is
     * lost (a collection, a JDK method's result, a method called only from outside the scanned code),
     * every lambda made in the scanned code for that interface method.
     */
    private Set<MethodId> lambdasOf(MethodId in, int index, MethodInsnNode call) {
        return receivers.computeIfAbsent(in + "#" + index, k -> traceReceiver(in, index, call));
    }

    private Set<MethodId> traceReceiver(MethodId in, int index, MethodInsnNode call) {
        Frame<SourceValue> f = frames(in)[index];
        if (f == null) {
            return Set.of(); // unreachable
        }
        SourceValue receiver = f.getStack(f.getStackSize() - 1 - Type.getArgumentTypes(call.desc).length);
        Set<MethodId> out = new HashSet<>();
        if (!made(in, receiver, out, new HashSet<>())) {
            return lambdas.get(call.owner + "." + call.name);
        }
        return out;
    }

    /** Adds to {@code out} the lambdas that {@code value} in {@code in} may be; false if the trail is lost. */
    private boolean made(MethodId in, SourceValue value, Set<MethodId> out, Set<String> seen) {
        Frame<SourceValue>[] fs = frames(in);
        MethodNode m = methods.get(in);
        for (AbstractInsnNode insn : value.insns) {
            int i = m.instructions.indexOf(insn);
            if (!seen.add(in + "#" + i)) {
                continue;
            }
            Frame<SourceValue> f = fs[i];
            if (insn instanceof InvokeDynamicInsnNode indy && lambdaAt.containsKey(indy)) {
                out.add(lambdaAt.get(indy));
            } else if (insn.getOpcode() == Opcodes.ACONST_NULL) {
                continue;
            } else if (insn instanceof VarInsnNode v && v.getOpcode() == Opcodes.ALOAD) {
                SourceValue local = f.getLocal(v.var);
                if (local.insns.isEmpty()) { // a parameter, never stored to since
                    int arg = argumentOf(m, v.var);
                    if (arg < 0 || !fromCallers(in, arg, out, seen)) {
                        return false;
                    }
                } else if (!made(in, local, out, seen)) {
                    return false;
                }
            } else if (insn.getOpcode() == Opcodes.ASTORE
                    || insn.getOpcode() == Opcodes.DUP
                    || insn instanceof TypeInsnNode t && t.getOpcode() == Opcodes.CHECKCAST) {
                if (!made(in, f.getStack(f.getStackSize() - 1), out, seen)) {
                    return false;
                }
            } else if (insn instanceof FieldInsnNode get
                    && (get.getOpcode() == Opcodes.GETFIELD || get.getOpcode() == Opcodes.GETSTATIC)
                    && classes.containsKey(get.owner)) {
                if (!stored(get, out, seen)) {
                    return false;
                }
            } else if (insn instanceof MethodInsnNode producer
                    && !declaredTargets(producer).isEmpty()) {
                for (MethodId maker : declaredTargets(producer)) {
                    if (!returned(maker, out, seen)) {
                        return false;
                    }
                }
            } else {
                return false;
            }
        }
        return true;
    }

    /** A lambda passed to {@code call} (one of {@link #RUN_INLINE}) that blocks, or null. */
    private String blockingArgument(MethodId in, int index, MethodInsnNode call) {
        Frame<SourceValue> f = frames(in)[index];
        if (f == null) {
            return null;
        }
        int args = Type.getArgumentTypes(call.desc).length;
        for (int a = 0; a < args; a++) {
            Set<MethodId> passed = new HashSet<>();
            made(in, f.getStack(f.getStackSize() - args + a), passed, new HashSet<>());
            for (MethodId lambda : passed) {
                Set<String> jdk = BLOCKING.get(lambda.owner());
                if (blockingVia.containsKey(lambda)
                        || jdk != null
                                && (jdk.contains(lambda.name()) || jdk.contains(lambda.name() + lambda.desc()))) {
                    return call.owner.replace('/', '.') + "." + call.name + " running " + lambda;
                }
            }
        }
        return null;
    }

    /** The lambdas stored in the field that {@code get} reads, anywhere in the scanned code. */
    private boolean stored(FieldInsnNode get, Set<MethodId> out, Set<String> seen) {
        for (Map.Entry<MethodId, MethodNode> e : methods.entrySet()) {
            AbstractInsnNode[] insns = e.getValue().instructions.toArray();
            for (int i = 0; i < insns.length; i++) {
                if (insns[i] instanceof FieldInsnNode put
                        && (put.getOpcode() == Opcodes.PUTFIELD || put.getOpcode() == Opcodes.PUTSTATIC)
                        && put.owner.equals(get.owner)
                        && put.name.equals(get.name)) {
                    Frame<SourceValue> f = frames(e.getKey())[i];
                    if (f != null && !made(e.getKey(), f.getStack(f.getStackSize() - 1), out, seen)) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    /** The lambdas that {@code method} may return. */
    private boolean returned(MethodId method, Set<MethodId> out, Set<String> seen) {
        MethodNode m = methods.get(method);
        Frame<SourceValue>[] fs = frames(method);
        for (int i = 0; i < m.instructions.size(); i++) {
            if (m.instructions.get(i).getOpcode() == Opcodes.ARETURN
                    && fs[i] != null
                    && !made(method, fs[i].getStack(fs[i].getStackSize() - 1), out, seen)) {
                return false;
            }
        }
        return true;
    }

    /** The lambdas passed as argument {@code arg} to {@code method} by its callers; false if it has none in the scanned code. */
    private boolean fromCallers(MethodId method, int arg, Set<MethodId> out, Set<String> seen) {
        List<CallSite> sites = callers.getOrDefault(method, List.of());
        if (sites.isEmpty()) {
            return false;
        }
        int args = Type.getArgumentTypes(method.desc()).length;
        for (CallSite site : sites) {
            Frame<SourceValue> f = frames(site.in())[site.index()];
            if (f != null && !made(site.in(), f.getStack(f.getStackSize() - args + arg), out, seen)) {
                return false;
            }
        }
        return true;
    }

    /** The index of the argument held in local {@code slot} on entry to {@code m}, or -1 for {@code this}. */
    private static int argumentOf(MethodNode m, int slot) {
        int at = (m.access & Opcodes.ACC_STATIC) != 0 ? 0 : 1;
        if (slot < at) {
            return -1;
        }
        Type[] args = Type.getArgumentTypes(m.desc);
        for (int a = 0; a < args.length; a++) {
            if (at == slot) {
                return a;
            }
            at += args[a].getSize();
        }
        return -1;
    }

    private Frame<SourceValue>[] frames(MethodId id) {
        return frames.computeIfAbsent(id, k -> {
            try {
                return new Analyzer<>(new SourceInterpreter()).analyze(k.owner(), methods.get(k));
            } catch (AnalyzerException e) {
                throw new IllegalStateException("cannot analyse " + k, e);
            }
        });
    }

    /** Every call that can block made while a monitor of the scanned code is held. */
    List<Finding> findings() {
        List<Finding> out = new ArrayList<>();
        for (ClassNode c : classes.values()) {
            for (MethodNode m : c.methods) {
                int[] depth = monitorDepths(m);
                int line = 0;
                AbstractInsnNode[] insns = m.instructions.toArray();
                for (int i = 0; i < insns.length; i++) {
                    if (insns[i] instanceof LineNumberNode ln) {
                        line = ln.line;
                    }
                    String via = null;
                    if (depth[i] > 0 && insns[i] instanceof MethodInsnNode call) {
                        via = blocks(new MethodId(c.name, m.name, m.desc), i, call);
                    }
                    if (via == null
                            && depth[i] > 0
                            && insns[i] instanceof MethodInsnNode call
                            && !classes.containsKey(call.owner)
                            && RUN_INLINE.contains(call.name)) {
                        via = blockingArgument(new MethodId(c.name, m.name, m.desc), i, call);
                    }
                    if (via != null) {
                        out.add(new Finding(
                                new MethodId(c.name, m.name, m.desc).toString(), c.sourceFile, line, chain(via)));
                    }
                }
            }
        }
        return out;
    }

    /** The calls from {@code first} down to the JDK's blocking method. */
    private List<String> chain(String first) {
        List<String> chain = new ArrayList<>();
        chain.add(first);
        String next = first;
        for (int hops = 0; hops < 20; hops++) {
            String n = next;
            MethodId id = blockingVia.keySet().stream()
                    .filter(k -> k.toString().equals(n))
                    .findFirst()
                    .orElse(null);
            if (id == null) {
                break;
            }
            next = blockingVia.get(id);
            chain.add(next);
        }
        return chain;
    }

    /**
     * How many monitors the method holds before each instruction (a {@code synchronized} method holds
     * one throughout, and so does a class initializer: the class's initialization lock, which every
     * other thread that uses the class waits for, pinned on every JDK up to 25 at least): a walk of its control flow, exception edges included, from the first
     * instruction, where {@code monitorenter} adds one and {@code monitorexit} takes one away.
     */
    static int[] monitorDepths(MethodNode m) {
        AbstractInsnNode[] insns = m.instructions.toArray();
        int[] depth = new int[insns.length];
        Arrays.fill(depth, -1);
        if (insns.length == 0) {
            return new int[0];
        }
        Map<LabelNode, Integer> index = new HashMap<>();
        for (int i = 0; i < insns.length; i++) {
            if (insns[i] instanceof LabelNode l) {
                index.put(l, i);
            }
        }
        Deque<Integer> work = new ArrayDeque<>();
        depth[0] = (m.access & Opcodes.ACC_SYNCHRONIZED) != 0 || m.name.equals("<clinit>") ? 1 : 0;
        work.push(0);
        while (!work.isEmpty()) {
            int i = work.pop();
            int d = depth[i];
            AbstractInsnNode insn = insns[i];
            int after = d
                    + (insn.getOpcode() == Opcodes.MONITORENTER ? 1 : insn.getOpcode() == Opcodes.MONITOREXIT ? -1 : 0);
            List<Integer> next = new ArrayList<>();
            if (insn instanceof JumpInsnNode j) {
                next.add(index.get(j.label));
                if (insn.getOpcode() != Opcodes.GOTO) {
                    next.add(i + 1);
                }
            } else if (insn instanceof TableSwitchInsnNode t) {
                next.add(index.get(t.dflt));
                t.labels.forEach(l -> next.add(index.get(l)));
            } else if (insn instanceof LookupSwitchInsnNode t) {
                next.add(index.get(t.dflt));
                t.labels.forEach(l -> next.add(index.get(l)));
            } else if (!isEnd(insn.getOpcode()) && i + 1 < insns.length) {
                next.add(i + 1);
            }
            for (int n : next) {
                flow(depth, work, n, after);
            }
            for (TryCatchBlockNode tc : m.tryCatchBlocks) {
                if (index.get(tc.start) <= i && i < index.get(tc.end)) {
                    flow(depth, work, index.get(tc.handler), d);
                }
            }
        }
        return depth;
    }

    private static void flow(int[] depth, Deque<Integer> work, int to, int d) {
        if (d > depth[to] && d <= 16) {
            depth[to] = d;
            work.push(to);
        }
    }

    private static boolean isEnd(int opcode) {
        return opcode == Opcodes.ATHROW || (opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN);
    }
}
