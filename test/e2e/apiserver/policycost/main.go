// Command policycost reports what each CEL expression of a ValidatingAdmissionPolicy
// costs the API server, compiled and evaluated by the API server's own code
// (k8s.io/apiserver's validating admission policy plugin: the composited compiler with
// the policy's variables, the strict-cost base environment of this release). Test
// tooling only.
//
//	policycost POLICY.yaml < INPUTS.json
//
// The API server does not estimate a policy's cost when it is created (the expressions
// are compiled against dynamic types; the type checker writes type warnings only), it
// enforces the cost while evaluating: at most celconfig.PerCallLimit per expression and
// celconfig.RuntimeCELCostBudget for one binding's validations and their messages, a
// failure beyond (with failurePolicy Fail, a refusal). So the cost is measured here as
// the API server counts it: for each validation alone (with the variables it reads, each
// evaluated once), for each messageExpression alone, and for the whole policy, on each
// input.
//
// INPUTS is a JSON list of {"name", "operation", "object", "oldObject"}; the output is one
// JSON object: {"perCallLimit", "budget", "inputs": [{"name", "validations": [cost...],
// "messages": [cost...], "total", "errors": [...]}]}.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

type input struct {
	Name      string                 `json:"name"`
	Operation string                 `json:"operation"`
	Object    map[string]interface{} `json:"object"`
	OldObject map[string]interface{} `json:"oldObject"`
}

type result struct {
	Name        string  `json:"name"`
	Validations []int64 `json:"validations"`
	Messages    []int64 `json:"messages"`
	Total       int64   `json:"total"`
	// Microseconds the whole policy took to evaluate (validations and messages), on this machine.
	TotalMicros int64 `json:"totalMicros"`
	// Microseconds per validation, with the variables it reads.
	ValidationMicros []int64  `json:"validationMicros"`
	Errors           []string `json:"errors"`
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "policycost: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 {
		fail("usage: policycost POLICY.yaml < INPUTS.json")
	}
	file, err := os.Open(os.Args[1])
	if err != nil {
		fail("%v", err)
	}
	var policy admissionv1.ValidatingAdmissionPolicy
	if err := yaml.NewYAMLOrJSONDecoder(file, 4096).Decode(&policy); err != nil || policy.Kind != "ValidatingAdmissionPolicy" {
		fail("%s: the first document is no ValidatingAdmissionPolicy (%v)", os.Args[1], err)
	}
	var inputs []input
	if err := json.NewDecoder(os.Stdin).Decode(&inputs); err != nil {
		fail("inputs: %v", err)
	}

	// As compilePolicy in k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go.
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		fail("%v", err)
	}
	withAuthorizer := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	withoutAuthorizer := plugincel.OptionalVariableDeclarations{}
	variables := make([]plugincel.NamedExpressionAccessor, len(policy.Spec.Variables))
	for i, v := range policy.Spec.Variables {
		variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	for _, v := range variables {
		if compiled := compiler.CompileAndStoreVariable(v, withAuthorizer, environment.StoredExpressions); compiled.Error != nil {
			fail("variable %s: %v", v.GetName(), compiled.Error)
		}
	}
	validations := make([]plugincel.ConditionEvaluator, len(policy.Spec.Validations))
	messages := make([]plugincel.ConditionEvaluator, len(policy.Spec.Validations))
	var all, allMessages []plugincel.ExpressionAccessor
	for i, v := range policy.Spec.Validations {
		condition := &validating.ValidationCondition{Expression: v.Expression, Message: v.Message}
		validations[i] = compiler.CompileCondition([]plugincel.ExpressionAccessor{condition}, withAuthorizer, environment.StoredExpressions)
		all = append(all, condition)
		if v.MessageExpression != "" {
			message := &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
			messages[i] = compiler.CompileCondition([]plugincel.ExpressionAccessor{message}, withoutAuthorizer, environment.StoredExpressions)
			allMessages = append(allMessages, message)
		}
	}
	whole := compiler.CompileCondition(all, withAuthorizer, environment.StoredExpressions)
	wholeMessages := compiler.CompileCondition(allMessages, withoutAuthorizer, environment.StoredExpressions)
	for _, e := range append(append([]plugincel.ConditionEvaluator{whole, wholeMessages}, validations...), messages...) {
		if e == nil {
			continue
		}
		for _, ce := range e.CompilationErrors() {
			fail("compiling: %v", ce)
		}
	}

	gvk := schema.GroupVersionKind{Group: "spiderpool.spidernet.io", Version: "v2beta1", Kind: "SpiderIPPool"}
	gvr := schema.GroupVersionResource{Group: "spiderpool.spidernet.io", Version: "v2beta1", Resource: "spiderippools"}
	results := []result{}
	for _, in := range inputs {
		var object, oldObject runtime.Object
		if in.Object != nil {
			object = &unstructured.Unstructured{Object: in.Object}
		}
		if in.OldObject != nil {
			oldObject = &unstructured.Unstructured{Object: in.OldObject}
		}
		name, _, _ := unstructured.NestedString(in.Object, "metadata", "name")
		attributes := admission.NewAttributesRecord(object, oldObject, gvk, "", name, gvr, "", admission.Operation(in.Operation), nil, true, nil)
		versioned := &admission.VersionedAttributes{Attributes: attributes, VersionedKind: gvk, VersionedObject: admission.NewLazyObject(object), VersionedOldObject: admission.NewLazyObject(oldObject)}
		request := plugincel.CreateAdmissionRequest(attributes, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(gvk))
		cost := func(e plugincel.ConditionEvaluator, budget int64) (used, remaining int64, errs []string) {
			if e == nil {
				return 0, budget, nil
			}
			evaluated, remaining, err := e.ForInput(context.Background(), versioned, request, plugincel.OptionalVariableBindings{}, nil, budget)
			if err != nil {
				errs = append(errs, err.Error())
			}
			for _, ev := range evaluated {
				if ev.Error != nil {
					errs = append(errs, ev.Error.Error())
				}
			}
			return budget - remaining, remaining, errs
		}
		r := result{Name: in.Name}
		for i := range validations {
			started := time.Now()
			c, _, _ := cost(validations[i], celconfig.RuntimeCELCostBudget)
			r.ValidationMicros = append(r.ValidationMicros, time.Since(started).Microseconds())
			r.Validations = append(r.Validations, c)
			// A messageExpression is evaluated for every validation; its errors count only when the validation fails.
			c, _, _ = cost(messages[i], celconfig.RuntimeCELCostBudget)
			r.Messages = append(r.Messages, c)
		}
		// As the validator does: the validations, then every messageExpression from what is left.
		started := time.Now()
		used, remaining, errs := cost(whole, celconfig.RuntimeCELCostBudget)
		usedMessages, _, _ := cost(wholeMessages, remaining)
		r.TotalMicros = time.Since(started).Microseconds()
		r.Total = used + usedMessages
		r.Errors = append([]string{}, errs...)
		results = append(results, r)
	}
	out, _ := json.Marshal(map[string]interface{}{"perCallLimit": celconfig.PerCallLimit, "budget": celconfig.RuntimeCELCostBudget, "inputs": results})
	fmt.Println(string(out))
}
