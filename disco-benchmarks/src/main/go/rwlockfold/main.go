// Command rwlockfold measures whether etcd 3.4 can admit an uncontended reader of disco's
// read/write lock in one Txn instead of two (the create Txn, then the phase Txn).
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"go.etcd.io/etcd/clientv3"
)

func main() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{os.Args[1]}, DialTimeout: 5 * time.Second})
	must(err)
	defer cli.Close()
	ctx := context.Background()
	lease, err := cli.Grant(ctx, 30)
	must(err)
	prefix := fmt.Sprintf("/fold/%d", time.Now().UnixNano())
	own := prefix + "/read/1"
	writers := prefix + "/write/"
	marker := "disco-rwlock-phase:" + prefix

	// folded: If(own key absent) Then(put own; If(no key in writers' range) Then(marker create-if-absent; get marker) Else(get newest writer)) Else(get own)
	folded := func() *clientv3.TxnResponse {
		phase := clientv3.OpTxn(
			[]clientv3.Cmp{clientv3.Compare(clientv3.Version(writers), "=", 0).WithRange(clientv3.GetPrefixRangeEnd(writers))},
			[]clientv3.Op{
				clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(marker), "=", 0)},
					[]clientv3.Op{clientv3.OpPut(marker, "")}, nil),
				clientv3.OpGet(marker)},
			[]clientv3.Op{clientv3.OpGet(writers, append(clientv3.WithLastCreate(), clientv3.WithPrefix())...)})
		r, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(own), "=", 0)).
			Then(clientv3.OpPut(own, "", clientv3.WithLease(lease.ID)), phase).
			Else(clientv3.OpGet(own)).Commit()
		must(err)
		return r
	}
	// today: the create Txn (reads the writers), then the phase Txn guarded by the own key
	twoStep := func() {
		r, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(own), "=", 0)).
			Then(clientv3.OpPut(own, "", clientv3.WithLease(lease.ID)), clientv3.OpGet(writers, append(clientv3.WithLastCreate(), clientv3.WithPrefix())...)).
			Else(clientv3.OpGet(own)).Commit()
		must(err)
		rev := r.Header.Revision
		_, err = cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(own), "=", rev)).
			Then(clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(marker), "=", 0)},
				[]clientv3.Op{clientv3.OpPut(marker, "")}, nil), clientv3.OpGet(marker)).Commit()
		must(err)
	}
	release := func() {
		_, err := cli.Delete(ctx, own)
		must(err)
	}

	// semantics: no writer -> admitted, marker created, token = its CreateRevision
	r := folded()
	inner := r.Responses[1].GetResponseTxn()
	m := inner.Responses[1].GetResponseRange().Kvs
	fmt.Printf("no writer: created own key %v, admitted (range compare held) %v, marker CreateRevision %d (own key at %d)\n",
		r.Succeeded, inner.Succeeded, m[0].CreateRevision, r.Header.Revision)
	release()
	// a second reader of the same phase shares the marker
	r = folded()
	inner = r.Responses[1].GetResponseTxn()
	fmt.Printf("next reader, same phase: admitted %v, marker CreateRevision %d (shared)\n", inner.Succeeded,
		inner.Responses[1].GetResponseRange().Kvs[0].CreateRevision)
	release()
	// a writer waits: the reader is queued, not admitted, and learns its predecessor in the same answer
	_, err = cli.Put(ctx, writers+"1", "")
	must(err)
	_, err = cli.Delete(ctx, marker)
	must(err)
	r = folded()
	inner = r.Responses[1].GetResponseTxn()
	w := inner.Responses[0].GetResponseRange().Kvs
	mk, err := cli.Get(ctx, marker)
	must(err)
	fmt.Printf("writer present: created own key %v, admitted %v, predecessor %s, marker exists %v\n", r.Succeeded,
		inner.Succeeded, string(w[0].Key), len(mk.Kvs) > 0)
	release()
	_, err = cli.Delete(ctx, writers+"1")
	must(err)

	// cost: uncontended read acquisitions, n each, interleaved
	const n = 500
	var a, b []float64
	for i := 0; i < n; i++ {
		t := time.Now()
		twoStep()
		a = append(a, float64(time.Since(t).Microseconds())/1000)
		release()
		t = time.Now()
		folded()
		b = append(b, float64(time.Since(t).Microseconds())/1000)
		release()
	}
	fmt.Printf("uncontended read acquisition, median of %d: two Txns %.3f ms, one folded Txn %.3f ms (%.2f x)\n", n,
		median(a), median(b), median(b)/median(a))
	cli.Delete(ctx, prefix, clientv3.WithPrefix())
	cli.Delete(ctx, marker)
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
