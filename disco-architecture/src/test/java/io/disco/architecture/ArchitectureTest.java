package io.disco.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The library's architecture rules (issue 46, item 6), on the main classes of every library module (the tools,
 * the examples and the test modules are not imported: a rule below keeps the library from depending on them).
 * Each rule fails the build with the classes and the dependencies that break it.
 */
class ArchitectureTest {

    /** The packages of the API modules: what an application codes against, for any backend. */
    private static final String[] API = {
        "io.disco.fencing..",
        "io.disco.core..",
        "io.disco.lock..",
        "io.disco.rwlock..",
        "io.disco.semaphore..",
        "io.disco.barrier..",
        "io.disco.election..",
        "io.disco.client.."
    };

    /**
     * The packages of the backends' client libraries. (gRPC is not among them: the fencing module stamps tokens on
     * an application's own gRPC calls, and the guard checks them, whatever the backend.)
     */
    private static final String[] BACKEND_TYPES = {
        "io.etcd..", "org.apache.zookeeper..", "org.apache.curator..", "io.lettuce.."
    };

    /** The packages of the tools, examples and test modules, which the library never depends on. */
    private static final String[] TOOLS_AND_TESTS = {
        "io.disco.testservers..",
        "io.disco.cli..",
        "io.disco.chaos..",
        "io.disco.benchmarks..",
        "io.disco.examples..",
        "io.disco.architecture..",
        "org.junit..",
        "org.awaitility.."
    };

    private static JavaClasses library;

    @BeforeAll
    static void importLibrary() {
        library = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.disco");
        Set<String> packages = library.stream().map(c -> c.getPackageName()).collect(Collectors.toSet());
        for (String expected : Set.of(
                "io.disco.fencing",
                "io.disco.core",
                "io.disco.core.internal",
                "io.disco.client",
                "io.disco.provider.etcd",
                "io.disco.provider.zookeeper",
                "io.disco.provider.redis",
                "io.disco.spring.boot")) {
            assertTrue(
                    packages.contains(expected), "the library's classes are imported: " + expected + " in " + packages);
        }
    }

    @Test
    void noPackageLoops() {
        slices().matching("io.disco.(**)").should().beFreeOfCycles().check(library);
    }

    @Test
    void apiModulesNameNoBackendType() {
        noClasses()
                .that()
                .resideInAnyPackage(API)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(BACKEND_TYPES)
                .because("an application codes against the API for any backend: no etcd, ZooKeeper, gRPC or Netty type"
                        + " may leak into it")
                .check(library);
    }

    @Test
    void apiModulesNameNoMicrometerType() {
        noClasses()
                .that()
                .resideInAnyPackage(API)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.micrometer..")
                .because("the client tells its acquisitions and holds to an AcquisitionObserver, an SPI of its own;"
                        + " disco-micrometer makes Observations of them, and an application without Micrometer runs"
                        + " the client without it")
                .check(library);
    }

    @Test
    void apiModulesDependOnNoProvider() {
        noClasses()
                .that()
                .resideInAnyPackage(API)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.disco.provider..")
                .because("the providers implement the API; the API knows none of them")
                .check(library);
    }

    @Test
    void providersDoNotDependOnEachOther() {
        noClasses()
                .that()
                .resideInAPackage("io.disco.provider.etcd..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.disco.provider.zookeeper..")
                .check(library);
        noClasses()
                .that()
                .resideInAPackage("io.disco.provider.zookeeper..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.disco.provider.etcd..")
                .check(library);
        noClasses()
                .that()
                .resideInAPackage("io.disco.provider.redis..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.disco.provider.etcd..", "io.disco.provider.zookeeper..")
                .check(library);
        noClasses()
                .that()
                .resideInAnyPackage("io.disco.provider.etcd..", "io.disco.provider.zookeeper..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.disco.provider.redis..")
                .check(library);
    }

    @Test
    void coreInternalsAreUsedByCoreAndTheProvidersOnly() {
        noClasses()
                .that()
                .resideOutsideOfPackages("io.disco.core..", "io.disco.provider..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.disco.core.internal..")
                .because("io.disco.core.internal is the providers' shared thread model, not an API")
                .check(library);
    }

    @Test
    void theLibraryDependsOnNoToolAndNoTestModule() {
        noClasses()
                .that()
                .resideOutsideOfPackages("io.disco.spring.boot.testing..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(TOOLS_AND_TESTS)
                .because("tools, examples and test support depend on the library, never the other way round (the"
                        + " starter's test support, disco-spring-boot-testing, is a test module itself)")
                .check(library);
    }
}
