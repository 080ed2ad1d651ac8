package io.disco.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.fencing.FencingToken;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The TOKEN column of {@code disco holders} and {@code disco watch}: "recording" for a lock holder of this library
 * whose token is not in its key yet (a waited hold records it after 50 ms), "?" where the backend's state does not
 * give it, "-" for a waiter. Runs without a backend: the claimants are built as a listing returns them.
 */
class ClaimantTableTest {

    private static final ClaimMetadata DISCO = ClaimMetadata.ofCurrentThread("client-1");

    @Test
    void aLockHolderOfThisLibraryWithoutItsTokenYetIsRecording() {
        assertEquals("recording", ClaimantTable.token(Primitive.LOCK, holder(Optional.empty(), DISCO)));
    }

    @Test
    void aRecordedTokenIsShown() {
        assertEquals("19", ClaimantTable.token(Primitive.LOCK, holder(Optional.of(FencingToken.of(19)), DISCO)));
    }

    @Test
    void whatTheStateDoesNotGiveIsUnknown() {
        // a Go holder that waited (its value is empty), and a read/write lock's writer (never recorded)
        assertEquals("?", ClaimantTable.token(Primitive.LOCK, holder(Optional.empty(), ClaimMetadata.EMPTY)));
        assertEquals("?", ClaimantTable.token(Primitive.RWLOCK, holder(Optional.empty(), DISCO)));
    }

    @Test
    void aWaiterHasNoToken() {
        Claimant waiter = new Claimant(
                "/locks/a/2",
                2,
                Claimant.Role.WAITER,
                1,
                Claimant.Mode.EXCLUSIVE,
                Optional.empty(),
                Optional.empty(),
                DISCO,
                DISCO.toJson());
        assertEquals("-", ClaimantTable.token(Primitive.LOCK, waiter));
    }

    private static Claimant holder(Optional<FencingToken> token, ClaimMetadata metadata) {
        return new Claimant(
                "/locks/a/1",
                1,
                Claimant.Role.HOLDER,
                0,
                Claimant.Mode.EXCLUSIVE,
                token,
                Optional.empty(),
                metadata,
                metadata == ClaimMetadata.EMPTY ? "" : metadata.toJson());
    }
}
