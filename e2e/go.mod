module github.com/tlsplane/tlsplane/e2e

go 1.26.0

replace github.com/tlsplane/tlsplane => ../
