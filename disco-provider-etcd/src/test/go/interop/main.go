// Command interop drives etcd's own Go coordination recipes (concurrency.Mutex,
// concurrency.Election, recipes.RWMutex, recipes.Barrier, recipes.DoubleBarrier, etcd 3.4) for the
// Java interop tests.
//
// Usage: interop <endpoints, comma-separated> <ttl seconds>
//
// It opens one session (lease) and reads commands from stdin, one per line, answering each on
// stdout when it has completed (a blocking command answers when it is granted):
//
//	lock <name>                -> locked <key> <create revision>
//	unlock                     -> unlocked
//	rlock <name>               -> rlocked
//	runlock                    -> runlocked
//	wlock <name>               -> wlocked
//	wunlock                    -> wunlocked
//	campaign <name> <value>    -> elected <key> <create revision>
//	proclaim <value>           -> proclaimed
//	resign                     -> resigned
//	observe <name>             -> observing, then "leader <value> <create revision>" per change
//	hold <name>                -> held (recipe.Barrier)
//	release <name>             -> released
//	wait <name>                -> waited, once the barrier is down
//	enter <name> <count>       -> entered, once count participants entered (recipe.DoubleBarrier)
//	leave                      -> left, once every participant left
//	quit                       -> (closes the session, exits)
//
// Errors are answered "error <message>".
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/clientv3/concurrency"
	recipe "go.etcd.io/etcd/contrib/recipes"
)

var out sync.Mutex

func say(format string, args ...interface{}) {
	out.Lock()
	defer out.Unlock()
	fmt.Printf(format+"\n", args...)
	os.Stdout.Sync()
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: interop <endpoints> <ttl seconds>")
		os.Exit(2)
	}
	ttl, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad ttl:", err)
		os.Exit(2)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(os.Args[1], ","), DialTimeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		os.Exit(1)
	}
	defer cli.Close()
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(ttl))
	if err != nil {
		fmt.Fprintln(os.Stderr, "session:", err)
		os.Exit(1)
	}
	defer s.Close()
	ctx := context.Background()
	var mutex *concurrency.Mutex
	var rw *recipe.RWMutex
	var election *concurrency.Election
	var double *recipe.DoubleBarrier
	say("ready %x", s.Lease())

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		var err error
		switch f[0] {
		case "lock":
			mutex = concurrency.NewMutex(s, f[1])
			if err = mutex.Lock(ctx); err == nil {
				say("locked %s %d", mutex.Key(), mutex.Header().Revision)
			}
		case "unlock":
			if err = mutex.Unlock(ctx); err == nil {
				say("unlocked")
			}
		case "rlock", "wlock":
			rw = recipe.NewRWMutex(s, f[1])
			if f[0] == "rlock" {
				err = rw.RLock()
			} else {
				err = rw.Lock()
			}
			if err == nil {
				say("%sed", f[0])
			}
		case "runlock":
			if err = rw.RUnlock(); err == nil {
				say("runlocked")
			}
		case "wunlock":
			if err = rw.Unlock(); err == nil {
				say("wunlocked")
			}
		case "campaign":
			election = concurrency.NewElection(s, f[1])
			if err = election.Campaign(ctx, f[2]); err == nil {
				say("elected %s %d", election.Key(), election.Rev())
			}
		case "proclaim":
			if err = election.Proclaim(ctx, f[1]); err == nil {
				say("proclaimed")
			}
		case "resign":
			if err = election.Resign(ctx); err == nil {
				say("resigned")
			}
		case "observe":
			ch := concurrency.NewElection(s, f[1]).Observe(ctx)
			say("observing")
			go func() {
				for r := range ch {
					if len(r.Kvs) > 0 {
						say("leader %s %d", string(r.Kvs[0].Value), r.Kvs[0].CreateRevision)
					}
				}
			}()
		case "hold":
			if err = recipe.NewBarrier(cli, f[1]).Hold(); err == nil {
				say("held")
			}
		case "release":
			if err = recipe.NewBarrier(cli, f[1]).Release(); err == nil {
				say("released")
			}
		case "wait":
			if err = recipe.NewBarrier(cli, f[1]).Wait(); err == nil {
				say("waited")
			}
		case "enter":
			var count int
			if count, err = strconv.Atoi(f[2]); err == nil {
				double = recipe.NewDoubleBarrier(s, f[1], count)
				if err = double.Enter(); err == nil {
					say("entered")
				}
			}
		case "leave":
			if err = double.Leave(); err == nil {
				say("left")
			}
		case "quit":
			return
		default:
			err = fmt.Errorf("unknown command %q", f[0])
		}
		if err != nil {
			say("error %v", err)
		}
	}
}
