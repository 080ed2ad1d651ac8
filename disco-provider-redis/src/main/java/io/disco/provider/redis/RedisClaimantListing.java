package io.disco.provider.redis;

import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.Claimant.Mode;
import io.disco.core.Claimant.Role;
import io.disco.core.Primitive;
import io.disco.fencing.FencingToken;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Who holds and who waits for a name, read by one script that writes nothing ({@code list.lua}): the queue's members
 * in order whose claim keys exist, with their fields. A claim holds once it was admitted (its {@code token} is set);
 * holders are listed first, then waiters, each in queue order. The lease id of a claimant is its owner's id; a
 * holder's {@code heldSince} is the server's time of its admission. An election candidate's value is its own (no
 * metadata); the other claims carry {@code ClaimMetadata}'s JSON.
 */
final class RedisClaimantListing {

    private RedisClaimantListing() {}

    static List<Claimant> list(
            RedisClusterAsyncCommands<String, String> commands,
            String where,
            Primitive primitive,
            String name,
            Duration timeout) {
        Objects.requireNonNull(primitive, "primitive");
        String checked = RedisKeys.checkName(name);
        List<Object> answer =
                Calls.get(Scripts.LIST.run(commands, checked), timeout, where, "listing the claimants of " + checked);
        List<Claimant> holders = new ArrayList<>();
        List<Claimant> waiters = new ArrayList<>();
        for (int i = 1; i + 8 < answer.size(); i += 9) {
            String id = text(answer.get(i));
            String owner = text(answer.get(i + 1));
            String kind = text(answer.get(i + 2));
            String token = text(answer.get(i + 3));
            String value = text(answer.get(i + 5));
            String meta = text(answer.get(i + 6));
            String since = text(answer.get(i + 7));
            boolean holds = !token.isEmpty() && !"0".equals(token);
            boolean election = ClaimKind.LEADER.code().equals(kind);
            Mode mode = ClaimKind.READ.code().equals(kind)
                            || ClaimKind.PERMIT.code().equals(kind)
                    ? Mode.SHARED
                    : Mode.EXCLUSIVE;
            long leaseId;
            try {
                leaseId = Long.parseLong(owner);
            } catch (NumberFormatException e) {
                leaseId = 0;
            }
            Optional<FencingToken> t = holds ? Optional.of(FencingToken.of(GrantStep.token(token))) : Optional.empty();
            Optional<Instant> heldSince = holds && !since.isEmpty()
                    ? Optional.of(Instant.ofEpochMilli(Long.parseLong(since)))
                    : Optional.empty();
            String key = RedisKeys.grantKey(checked, id);
            (holds ? holders : waiters)
                    .add(new Claimant(
                            key,
                            leaseId,
                            holds ? Role.HOLDER : Role.WAITER,
                            0,
                            mode,
                            t,
                            heldSince,
                            election ? ClaimMetadata.EMPTY : ClaimMetadata.parse(meta),
                            election ? value : meta));
        }
        List<Claimant> out = new ArrayList<>(holders.size() + waiters.size());
        for (Claimant c : holders) {
            out.add(at(c, out.size()));
        }
        for (Claimant c : waiters) {
            out.add(at(c, out.size()));
        }
        return out;
    }

    private static Claimant at(Claimant c, int position) {
        return new Claimant(
                c.key(), c.leaseId(), c.role(), position, c.mode(), c.token(), c.heldSince(), c.metadata(), c.value());
    }

    private static String text(Object o) {
        return o == null ? "" : String.valueOf(o);
    }
}
