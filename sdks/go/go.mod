module github.com/atrium/atrium/sdks/go

go 1.19
