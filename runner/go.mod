module github.com/magos-dev/magos/runner

go 1.26.0
