package io.disco.client;

/** The primitives the client makes by name; a name in use is used by one kind at a time. */
enum Kind {
    /** {@link Disco#lock(String)}. */
    LOCK("lock"),
    /** {@link Disco#readWriteLock(String)}. */
    READ_WRITE_LOCK("read/write lock"),
    /** {@link Disco#semaphore(String, int)}. */
    SEMAPHORE("semaphore"),
    /** {@link Disco#election(String)} and {@link Disco#leadershipRunner}. */
    ELECTION("election");

    private final String label;

    Kind(String label) {
        this.label = label;
    }

    @Override
    public String toString() {
        return label;
    }
}
