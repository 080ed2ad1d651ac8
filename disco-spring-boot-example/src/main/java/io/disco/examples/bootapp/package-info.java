/**
 * An example Spring Boot application on {@code disco-spring-boot-starter}, with no disco wiring of its own
 * beyond what it does with the {@code Disco} client the starter provides:
 *
 * <ul>
 *   <li>{@link io.disco.examples.bootapp.LedgerController}: a ledger, the guarded HTTP resource
 *       ({@code PUT /ledger/{account}}), guarded by the starter's filter from properties alone (one mark
 *       per account);</li>
 *   <li>{@link io.disco.examples.bootapp.PaymentController}: {@code POST /payments/{account}} takes the account's
 *       lock with {@code tryLock(timeout)} inside the request, writes the payment to the ledger with the lock's token
 *       and relays the ledger's answer; the controller docs/spring-boot.md teaches with;</li>
 *   <li>{@link io.disco.examples.bootapp.OrderController}: {@code POST /orders/{id}} takes the order's lock
 *       through the {@code Disco} client inside the request and writes the order to the ledger with the
 *       lock's token;</li>
 *   <li>{@code ReportJob}: a leader-only scheduled job, run by
 *       {@code disco.leadershipRunner(...)}: every interval while this instance leads, it writes the report
 *       to the ledger with the term's token;</li>
 *   <li>{@link io.disco.examples.bootapp.StatusController}: {@code GET /status}, what this instance leads and
 *       holds, for the demo.</li>
 * </ul>
 *
 * <p>{@code ./demo} runs two instances of it against the demo's etcd (scenario {@code boot/two-instances},
 * {@code io.disco.examples.boot.BootExample} in disco-examples).
 */
package io.disco.examples.bootapp;
