// Command oracle answers questions about Go's own behaviour for the webhook's e2e tests:
// how time.ParseDuration and time.Duration.String treat a string or a number, and how
// gopkg.in/yaml.v2 (Spiderpool's controller) and gopkg.in/yaml.v3 (Spiderpool's agent)
// decode a conf.yml document.
//
// It reads one JSON object per line on stdin and writes exactly one JSON object per line
// on stdout, in the same order:
//
//	{"op":"duration","in":"1m30s"} -> {"ok":true,"ns":"90000000000","string":"1m30s"}
//	                               or {"ok":false,"error":"time: invalid duration \"x\""}
//	{"op":"format","ns":"1500"}    -> {"ok":true,"string":"1.5µs"}
//	{"op":"confyml","in":"..."}    -> {"v2":{...},"v3":{...}} (see decoding: the whole conf.yml, then the start-time checks)
//	{"op":"url","in":"http://h"}   -> {"ok":true,"scheme":"http","host":"h"} or {"ok":false,"error":"parse ..."}
//
// A line that is not a valid request is answered with {"ok":false,"error":"oracle: ..."}.
// A panic or a hang (over caseTimeout) in a decoder is reported as that decoder's error.
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	yamlv2 "gopkg.in/yaml.v2"
	yamlv3 "gopkg.in/yaml.v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The structs below follow /work/shared/spiderpool/conf-yml-schema.md (Spiderpool's
// SpiderpoolConfigmapConfig, and PR #5778's provider shape): the same Go types and yaml
// tags, written here from that page. The provider block is a plain struct, as in
// Spiderpool main (a7fbd3b): a `!!null` mapping still decodes into it.

// Provider is the iaasNetworkProvider block.
type Provider struct {
	ServerURL          string   `yaml:"serverUrl"`
	HTTPRequestTimeout string   `yaml:"httpRequestTimeout"`
	Service            Service  `yaml:"service"`
	TLS                TLS      `yaml:"tls"`
	ExcludeReportNics  []string `yaml:"excludeReportNics"`
}

type Service struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
	Port      int    `yaml:"port"`
}

type TLS struct {
	CAFile string `yaml:"caFile"`
}

type PodResourceInject struct {
	Enabled           bool     `yaml:"enabled"`
	NamespacesExclude []string `yaml:"namespacesExclude"`
	NamespacesInclude []string `yaml:"namespacesInclude"`
}

type SubENIRule struct {
	ResourceName    string               `yaml:"resourceName"`
	DefaultMaxCount int                  `yaml:"defaultMaxCount"`
	NodeSelector    metav1.LabelSelector `yaml:"nodeSelector"`
}

type MasterNICRule struct {
	NodeSelector      metav1.LabelSelector `yaml:"nodeSelector"`
	DefaultMaxCount   int                  `yaml:"defaultMaxCount"`
	IncludeInterfaces []string             `yaml:"includeInterfaces"`
	ExcludeInterfaces []string             `yaml:"excludeInterfaces"`
}

type NetworkResourcePlugin struct {
	Enabled              bool   `yaml:"enabled"`
	KubeletRootDir       string `yaml:"kubeletRootDir"`
	DevicePluginAffinity struct {
		NodeSelector metav1.LabelSelector `yaml:"nodeSelector"`
	} `yaml:"devicePluginAffinity"`
	ResourceAdvertisement struct {
		SubENI struct {
			Rules []SubENIRule `yaml:"rules"`
		} `yaml:"subENI"`
		MasterNIC struct {
			Rules []MasterNICRule `yaml:"rules"`
		} `yaml:"masterNIC"`
	} `yaml:"resourceAdvertisement"`
}

// Conf is the whole of conf.yml.
type Conf struct {
	IpamUnixSocketPath                      string            `yaml:"ipamUnixSocketPath"`
	EnableIPv4                              bool              `yaml:"enableIPv4"`
	EnableIPv6                              bool              `yaml:"enableIPv6"`
	TuneSysctlConfig                        bool              `yaml:"tuneSysctlConfig"`
	EnableStatefulSet                       bool              `yaml:"enableStatefulSet"`
	EnableKubevirtStaticIP                  bool              `yaml:"enableKubevirtStaticIP"`
	EnableSpiderSubnet                      bool              `yaml:"enableSpiderSubnet"`
	EnableAutoPoolForApplication            bool              `yaml:"enableAutoPoolForApplication"`
	ClusterSubnetAutoPoolDefaultRedundantIP int               `yaml:"clusterSubnetAutoPoolDefaultRedundantIPNumber"`
	EnableCleanOutdatedEndpoint             bool              `yaml:"enableCleanOutdatedEndpoint"`
	EnableIPConflictDetection               bool              `yaml:"enableIPConflictDetection"`
	EnableGatewayDetection                  bool              `yaml:"enableGatewayDetection"`
	EnableValidatingResourcesDeletedWebhook bool              `yaml:"enableValidatingResourcesDeletedWebhook"`
	PodResourceInject                       PodResourceInject `yaml:"podResourceInject"`
	IaasNetworkProvider                     Provider          `yaml:"iaasNetworkProvider"`
	Agent                                   struct {
		NetworkResourcePlugin NetworkResourcePlugin `yaml:"networkResourcePlugin"`
	} `yaml:"agent"`
}

// sunPathBytes is the size of Linux's sockaddr_un.sun_path: the agent's unix socket path
// must fit with its terminating NUL (Go's syscall.SockaddrUnix refuses it otherwise).
const sunPathBytes = 108

// startCheck runs what a decoded conf.yml still has to pass at start, as the schema page
// lists it: the agent's unix socket path, the IaaS client's ValidateConfig when serverUrl
// is set (pkg/iaas/client/client.go: url.Parse, http or https, a non-empty URL.Host, the
// timeout's bounds), then the checks of agent.networkResourcePlugin after its defaults.
// agentOnly tells whether a failure stops only the agent (the socket), reported apart.
func startCheck(c *Conf) (err error, agentOnly error) {
	socket := c.IpamUnixSocketPath
	if socket == "" {
		socket = "/var/run/spidernet/spiderpool.sock"
	}
	if n := len(socket); n > sunPathBytes || (n == sunPathBytes && socket[0] != '@' && socket[0] != 0) {
		agentOnly = fmt.Errorf("ipamUnixSocketPath is %d bytes: bind: invalid argument", n)
	}
	return validateProvider(&c.IaasNetworkProvider), agentOnly
}

// validateProvider is the IaaS client's ValidateConfig (Spiderpool main), with the
// provider reference of PR #5778 (service.name, then namespace and port), the newer
// upstream shape the webhook also checks: the provider is enabled by either.
func validateProvider(p *Provider) error {
	if p.ServerURL == "" && p.Service.Name == "" {
		return nil
	}
	if p.ServerURL != "" {
		u, err := url.Parse(p.ServerURL)
		if err != nil {
			return fmt.Errorf("invalid iaasNetworkProvider.serverUrl %q: %w", p.ServerURL, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("invalid iaasNetworkProvider.serverUrl %q: must start with http:// or https://", p.ServerURL)
		}
		if u.Host == "" {
			return fmt.Errorf("invalid iaasNetworkProvider.serverUrl %q: host is empty", p.ServerURL)
		}
	}
	if p.Service.Name != "" && (p.Service.Namespace == "" || p.Service.Port < 1 || p.Service.Port > 65535) {
		return fmt.Errorf("invalid iaasNetworkProvider.service: namespace %q, port %d", p.Service.Namespace, p.Service.Port)
	}
	if p.HTTPRequestTimeout != "" {
		d, err := time.ParseDuration(p.HTTPRequestTimeout)
		if err != nil {
			return fmt.Errorf("invalid iaasNetworkProvider.httpRequestTimeout %q: %w", p.HTTPRequestTimeout, err)
		}
		if d <= 0 || d >= 2*time.Minute || d >= 100*time.Second {
			return fmt.Errorf("invalid iaasNetworkProvider.httpRequestTimeout %q: out of bounds", p.HTTPRequestTimeout)
		}
	}
	return nil
}

// pluginCheck runs the start-time checks of agent.networkResourcePlugin (the schema
// page's list), as Spiderpool does after its defaults.
func pluginCheck(c *Conf) error {
	p := c.Agent.NetworkResourcePlugin
	root := p.KubeletRootDir
	if root == "" {
		root = "/var/lib/kubelet"
	}
	if !filepath.IsAbs(filepath.Clean(root)) {
		return fmt.Errorf("kubeletRootDir must be an absolute path")
	}
	if _, err := metav1.LabelSelectorAsSelector(&p.DevicePluginAffinity.NodeSelector); err != nil {
		return fmt.Errorf("devicePluginAffinity.nodeSelector is invalid: %w", err)
	}
	for i, r := range p.ResourceAdvertisement.SubENI.Rules {
		name := r.ResourceName
		if name == "" {
			name = "spidernet.io/sub-eni"
		}
		if errs := validation.IsQualifiedName(name); len(errs) != 0 {
			return fmt.Errorf("subENI.rules[%d].resourceName %q is invalid: %s", i, name, strings.Join(errs, "; "))
		}
		if r.DefaultMaxCount < 0 {
			return fmt.Errorf("subENI.rules[%d].defaultMaxCount must be greater than or equal to 0", i)
		}
		if _, err := metav1.LabelSelectorAsSelector(&r.NodeSelector); err != nil {
			return fmt.Errorf("subENI.rules[%d].nodeSelector is invalid: %w", i, err)
		}
	}
	for i, r := range p.ResourceAdvertisement.MasterNIC.Rules {
		if r.DefaultMaxCount < 0 {
			return fmt.Errorf("masterNIC.rules[%d].defaultMaxCount must be greater than or equal to 0", i)
		}
		if _, err := metav1.LabelSelectorAsSelector(&r.NodeSelector); err != nil {
			return fmt.Errorf("masterNIC.rules[%d].nodeSelector is invalid: %w", i, err)
		}
		for _, pattern := range append(append([]string{}, r.IncludeInterfaces...), r.ExcludeInterfaces...) {
			if _, err := filepath.Match(pattern, "eth0"); err != nil {
				return fmt.Errorf("masterNIC.rules[%d] pattern %q is invalid: %w", i, pattern, err)
			}
		}
	}
	return nil
}

type request struct {
	Op string `json:"op"`
	In string `json:"in"`
	Ns string `json:"ns"`
}

// urlAnswer is url.Parse's verdict: the scheme and host, or the error text.
type urlAnswer struct {
	OK     bool   `json:"ok"`
	Scheme string `json:"scheme,omitempty"`
	Host   string `json:"host,omitempty"`
	Error  string `json:"error,omitempty"`
}

type durationAnswer struct {
	OK     bool   `json:"ok"`
	Ns     string `json:"ns,omitempty"`
	String string `json:"string,omitempty"`
	Error  string `json:"error,omitempty"`
}

// decoding is one decoder's reading. The *Hex fields carry the exact bytes of the
// strings (JSON would turn invalid UTF-8, e.g. from !!binary, into U+FFFD); utf8 tells
// whether the string fields are exact.
type decoding struct {
	OK                    bool   `json:"ok"`
	Error                 string `json:"error,omitempty"`
	ServerURL             string `json:"serverUrl"`
	HTTPRequestTimeout    string `json:"httpRequestTimeout"`
	ServerURLHex          string `json:"serverUrlHex"`
	HTTPRequestTimeoutHex string `json:"httpRequestTimeoutHex"`
	UTF8                  bool   `json:"utf8"`
	// StartError is the start-time check's failure on what the decoder read ("" when it
	// passes or the decoder failed): the provider's ValidateConfig, then the plugin checks.
	StartError string `json:"startError,omitempty"`
	// AgentStartError is the failure only the agent meets (its unix socket's bind).
	AgentStartError string `json:"agentStartError,omitempty"`
}

type confAnswer struct {
	V2 decoding `json:"v2"`
	V3 decoding `json:"v3"`
}

type failure struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// caseTimeout bounds one decoder on one document; a hung goroutine is abandoned.
const caseTimeout = 20 * time.Second

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 256<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		if err := enc.Encode(answer(in.Bytes())); err != nil {
			fmt.Fprintln(os.Stderr, "oracle: write:", err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil && err != io.EOF {
		fmt.Fprintln(os.Stderr, "oracle: read:", err)
		os.Exit(1)
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "oracle: write:", err)
		os.Exit(1)
	}
}

func answer(line []byte) any {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return failure{Error: "oracle: bad request: " + err.Error()}
	}
	switch req.Op {
	case "duration":
		d, err := time.ParseDuration(req.In)
		if err != nil {
			return durationAnswer{Error: err.Error()}
		}
		return durationAnswer{OK: true, Ns: strconv.FormatInt(int64(d), 10), String: d.String()}
	case "format":
		n, err := strconv.ParseInt(req.Ns, 10, 64)
		if err != nil {
			return failure{Error: "oracle: bad ns: " + err.Error()}
		}
		return durationAnswer{OK: true, Ns: req.Ns, String: time.Duration(n).String()}
	case "confyml":
		data := []byte(req.In)
		return confAnswer{
			V2: decode(func(c *Conf) error { return yamlv2.Unmarshal(data, c) }),
			V3: decode(func(c *Conf) error { return yamlv3.Unmarshal(data, c) }),
		}
	case "url":
		u, err := url.Parse(req.In)
		if err != nil {
			return urlAnswer{Error: err.Error()}
		}
		return urlAnswer{OK: true, Scheme: u.Scheme, Host: u.Host}
	default:
		return failure{Error: fmt.Sprintf("oracle: unknown op %q", req.Op)}
	}
}

// decode runs one decoder on a fresh Conf, turning a panic or a hang into an error.
func decode(unmarshal func(*Conf) error) decoding {
	done := make(chan decoding, 1)
	go func() {
		var d decoding
		defer func() {
			if r := recover(); r != nil {
				d = decoding{Error: fmt.Sprintf("panic: %v", r)}
			}
			done <- d
		}()
		var c Conf
		if err := unmarshal(&c); err != nil {
			d.Error = err.Error()
		} else {
			d.OK = true
			err, agentOnly := startCheck(&c)
			if err == nil {
				err = pluginCheck(&c)
			}
			if err != nil {
				d.StartError = err.Error()
			}
			if agentOnly != nil {
				d.AgentStartError = agentOnly.Error()
			}
		}
		// Decoders may fill fields before failing (type errors); report what they hold.
		d.ServerURL, d.HTTPRequestTimeout = c.IaasNetworkProvider.ServerURL, c.IaasNetworkProvider.HTTPRequestTimeout
		d.ServerURLHex = hex.EncodeToString([]byte(d.ServerURL))
		d.HTTPRequestTimeoutHex = hex.EncodeToString([]byte(d.HTTPRequestTimeout))
		d.UTF8 = utf8.ValidString(d.ServerURL) && utf8.ValidString(d.HTTPRequestTimeout)
	}()
	select {
	case d := <-done:
		return d
	case <-time.After(caseTimeout):
		return decoding{Error: fmt.Sprintf("timeout: the decoder did not return within %s", caseTimeout)}
	}
}
