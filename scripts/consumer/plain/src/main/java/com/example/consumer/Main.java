package com.example.consumer;

import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.etcd.jetcd.Client;
import java.util.concurrent.TimeUnit;

/** Takes a lock through the client against the etcd at args[0] and prints its token. */
public final class Main {
    public static void main(String[] args) throws Exception {
        try (Client client = Client.builder().endpoints(args[0]).build();
             Disco disco = EtcdProvider.disco(client, EtcdOptions.defaults())) {
            FencedLock lock = disco.lock("/consumer-check/plain");
            if (!lock.tryLock(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no lock within 30 s");
            }
            try {
                System.out.println("token " + lock.token());
            } finally {
                lock.unlock();
            }
        }
    }
}
