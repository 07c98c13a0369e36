package main

import (
	"strings"
	"testing"
)

// Each figure of each Pod is one line, and a CSV without a drawn column is refused by name.
func TestPlotDrawsALinePerPodAndFigure(t *testing.T) {
	csv := "pod,minute,rss_bytes,heap_inuse_bytes,heap_goal_bytes,working_set_bytes,goroutines,open_fds,watch_events_total\n" +
		"le-a,1,52428800,1,20971520,60000000,40,12,1\nle-b,1,52428800,1,20971520,60000000,41,12,1\n" +
		"le-a,2,53428800,1,21971520,61000000,40,12,2\nle-b,2,52428800,1,20971520,60000000,41,12,2\n"
	svg, err := plot(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(svg, "<polyline"); n != 2*5 {
		t.Errorf("%d lines, want 10 (2 Pods × RSS, heap goal, working set, goroutines, open files)", n)
	}
	if !strings.Contains(svg, ">a rss_bytes<") || !strings.Contains(svg, ">b open_fds<") {
		t.Errorf("legend lacks the Pods' figures:\n%s", svg)
	}
	if _, err := plot(strings.NewReader("pod,minute,rss_bytes\nx,1,2\n")); err == nil || !strings.Contains(err.Error(), `"heap_goal_bytes"`) {
		t.Errorf("a CSV without heap_goal_bytes: %v, want an error naming it", err)
	}
}
