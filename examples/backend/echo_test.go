package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestEchoClosesOnRequestAndCounts(t *testing.T) {
	counts := &counters{}
	srv := httptest.NewServer(echoHandler("t", counts))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/x", nil)
	req.Header.Set(CloseHeader, "1")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !resp.Close {
		t.Errorf("connection not closed after a request with %s", CloseHeader)
	}
	if _, err := srv.Client().Get(srv.URL + CountPath); err != nil {
		t.Fatal(err)
	}
	if n := counts.requests.Load(); n != 1 {
		t.Errorf("counted %d requests, want 1 (the count query is not counted)", n)
	}
}
