package io.disco.core.internal.grant;

/**
 * A grant a service holds, with what its backend needs to release it and to recognise its claim (an etcd key and
 * its create revision, a ZooKeeper node).
 *
 * @param <G> the grant handed to the user
 */
public interface Held<G> {

    /** @return the grant handed to the user */
    G grant();
}
