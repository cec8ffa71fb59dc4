package reprocess

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
)

// Run runs p on runner (the SDK's runner names; empty means Prism in
// process) until the job ends, or ctx ends.
//
// On Prism in process, ending ctx cancels the job through the Job API:
// cancelling the context given to beam.Run made Prism's worker crash the
// process (Beam v2.77.0), while the Job API's Cancel stops the job
// cleanly. Other runners get ctx as it is: the job runs remotely and
// ending ctx stops waiting.
func Run(ctx context.Context, runner string, p *beam.Pipeline) error {
	if runner != "" && runner != "prism" {
		_, err := beam.Run(ctx, runner, p)
		return err
	}
	if *jobopts.Endpoint != "" && *jobopts.Endpoint != prismEndpoint.Load() {
		// A Prism job server elsewhere: the job is not ours to cancel.
		_, err := beam.Run(ctx, "prism", p)
		return err
	}
	cli, err := inProcessPrism(ctx)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("crawlkeeper-reprocess-%d-%d", time.Now().UnixNano(), jobs.Add(1))
	*jobopts.JobName = name
	done := make(chan error, 1)
	go func() {
		_, err := beam.Run(context.WithoutCancel(ctx), "prism", p)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	resume := quiesce()
	err = cancelJob(cli, name, done)
	resume()
	if err != nil {
		return err
	}
	return ctx.Err()
}

var (
	prismOnce     sync.Once
	prismClient   jobpb.JobServiceClient
	prismErr      error
	prismEndpoint atomic.Value // string
	jobs          atomic.Int64
)

// inProcessPrism starts one Prism job server for the process and points
// the SDK's endpoint flag at it, so this process both runs the job server
// and, in loopback mode, the workers.
func inProcessPrism(ctx context.Context) (jobpb.JobServiceClient, error) {
	prismOnce.Do(func() {
		port, err := freePort()
		if err != nil {
			prismErr = err
			return
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		prismClient, prismErr = prism.CreateJobServer(cctx, prism.Options{Port: port})
		if prismErr != nil {
			return
		}
		ep := fmt.Sprintf("localhost:%d", port)
		prismEndpoint.Store(ep)
		*jobopts.Endpoint = ep
		if *jobopts.EnvironmentType == "" {
			*jobopts.EnvironmentType = "loopback"
		}
	})
	return prismClient, prismErr
}

// freePort asks the kernel for a port that is free now. Prism's job
// server takes a port number, not a listener, so another process could
// take it in between; that fails the start loudly rather than silently.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// cancelJob finds the job named name on the in-process Prism and cancels
// it, then waits for beam.Run to return. The job may not be submitted yet
// when ctx ends, so it looks for it for a while.
func cancelJob(cli jobpb.JobServiceClient, name string, done <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		resp, err := cli.GetJobs(ctx, &jobpb.GetJobsRequest{})
		if err != nil {
			return fmt.Errorf("prism: list jobs: %w", err)
		}
		id := ""
		for _, j := range resp.GetJobInfo() {
			if j.GetJobName() == name {
				id = j.GetJobId()
			}
		}
		if id != "" {
			if _, err := cli.Cancel(ctx, &jobpb.CancelJobRequest{JobId: id}); err != nil {
				return fmt.Errorf("prism: cancel job %s: %w", id, err)
			}
			break
		}
		select {
		case err := <-done:
			return err // it ended before it was found
		case <-ctx.Done():
			return fmt.Errorf("prism: job %s not found to cancel", name)
		case <-time.After(50 * time.Millisecond):
		}
	}
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("prism: job %s: %w", name, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("prism: job %s did not stop within a minute of its cancellation", name)
	}
}
