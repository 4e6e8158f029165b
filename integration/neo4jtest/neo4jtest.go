// Package neo4jtest finds the real Neo4j server that integration tests run against: the one
// NEO4J_URI names, otherwise one started with testcontainers-go when a Docker engine answers.
// Without either, tests fail loudly: `make test` starts the project's local Neo4j and sets
// NEO4J_URI before running them. Nothing here stands in for Neo4j.
package neo4jtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Server is how to reach the Neo4j server of a test run.
type Server struct {
	URI      string
	User     string
	Password string
	Database string
}

var (
	once   sync.Once
	server Server
	errRun error
)

// Find returns the test run's Neo4j server, starting a container on first use when
// NEO4J_URI is unset and Docker answers.
func Find(ctx context.Context) (Server, error) {
	once.Do(func() { server, errRun = find(ctx) })
	return server, errRun
}

func find(ctx context.Context) (Server, error) {
	if uri := os.Getenv("NEO4J_URI"); uri != "" {
		db := os.Getenv("NEO4J_DATABASE")
		if db == "" {
			db = "neo4j"
		}
		return Server{URI: uri, User: os.Getenv("NEO4J_USER"), Password: os.Getenv("NEO4J_PASSWORD"), Database: db}, nil
	}
	provider, err := testcontainers.NewDockerProvider()
	if err == nil {
		defer provider.Close()
		err = provider.Health(ctx)
	}
	if err != nil {
		return Server{}, fmt.Errorf("no Neo4j for the integration tests: NEO4J_URI is unset and no Docker engine answers (%v); "+
			"run `make test`, which starts the project's local Neo4j, or set NEO4J_URI", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        "neo4j:5.26",
			ExposedPorts: []string{"7687/tcp"},
			Env:          map[string]string{"NEO4J_AUTH": "none", "NEO4J_dbms_usage__report_enabled": "false"},
			WaitingFor:   wait.ForListeningPort("7687/tcp").WithStartupTimeout(3 * time.Minute),
		},
		Started: true,
	})
	if err != nil {
		return Server{}, fmt.Errorf("starting a Neo4j container: %w", err)
	}
	endpoint, err := c.PortEndpoint(ctx, "7687/tcp", "bolt")
	if err != nil {
		return Server{}, err
	}
	return Server{URI: endpoint, Database: "neo4j"}, nil
}
