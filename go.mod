module github.com/catalogbot/catalogbot

go 1.26.0

require (
	github.com/blang/semver/v4 v4.0.0
	github.com/go-git/go-git/v5 v5.16.4
	github.com/spf13/cobra v1.10.2
	golang.org/x/text v0.43.0
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/go-git/gcfg v1.5.1-0.20230307220236-3a3c6141e376 // indirect
	github.com/go-git/go-billy/v5 v5.6.2 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jbenet/go-context v0.0.0-20150711004518-d14ea06fba99 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	go.yaml.in/yaml/v2 v2.4.3 // indirect
	golang.org/x/net v0.39.0 // indirect
	gopkg.in/warnings.v0 v0.1.2 // indirect
)
