// RUN: braid-opt %s -split-input-file -verify-diagnostics
// braid.optimizer, the model spec's training optimizers: one case per rule.

// A complete one verifies.
module attributes {braid.optimizer = {dense = {type = "adam", lr = 1.0e-03 : f64, beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64}, embedding = {type = "rowwise_adagrad", lr = 5.0e-03 : f64, eps = 1.0e-08 : f64}}} {}

// -----

// expected-error @+1 {{'braid.optimizer' must be {dense = {...}, embedding = {...}} on a module}}
module attributes {braid.optimizer = {dense = {type = "sgd", lr = 1.0 : f64}}} {}

// -----

// expected-error @+1 {{'braid.optimizer' must be {dense = {...}, embedding = {...}} on a module}}
module attributes {braid.optimizer = "sgd"} {}

// -----

// expected-error @+1 {{'braid.optimizer' must be {dense = {...}, embedding = {...}} on a module}}
func.func @f() attributes {braid.optimizer = {dense = {type = "sgd", lr = 1.0 : f64}, embedding = {type = "sgd", lr = 1.0 : f64}}} { return }

// -----

// expected-error @+1 {{'braid.optimizer' dense: 'type' must be one of sgd adagrad adam}}
module attributes {braid.optimizer = {dense = {type = "rowwise_adagrad", lr = 1.0 : f64, eps = 1.0e-8 : f64}, embedding = {type = "sgd", lr = 1.0 : f64}}} {}

// -----

// expected-error @+1 {{'braid.optimizer' embedding: 'type' must be one of sgd adagrad rowwise_adagrad}}
module attributes {braid.optimizer = {dense = {type = "sgd", lr = 1.0 : f64}, embedding = {type = "adam", lr = 1.0 : f64}}} {}

// -----

// expected-error @+1 {{'braid.optimizer' dense: sgd has no 'eps'}}
module attributes {braid.optimizer = {dense = {type = "sgd", lr = 1.0 : f64, eps = 1.0 : f64}, embedding = {type = "sgd", lr = 1.0 : f64}}} {}

// -----

// expected-error @+1 {{'braid.optimizer' embedding: adagrad needs 'eps' as a float}}
module attributes {braid.optimizer = {dense = {type = "sgd", lr = 1.0 : f64}, embedding = {type = "adagrad", lr = 1.0 : f64}}} {}

// -----

// expected-error @+1 {{'braid.optimizer' dense: 'lr' must be finite and positive, got 0}}
module attributes {braid.optimizer = {dense = {type = "sgd", lr = 0.0 : f64}, embedding = {type = "sgd", lr = 1.0 : f64}}} {}

// -----

// expected-error @+1 {{'braid.optimizer' dense: 'beta2' must be in [0, 1), got 1}}
module attributes {braid.optimizer = {dense = {type = "adam", lr = 1.0 : f64, beta1 = 0.9 : f64, beta2 = 1.0 : f64, eps = 1.0e-8 : f64}, embedding = {type = "sgd", lr = 1.0 : f64}}} {}
