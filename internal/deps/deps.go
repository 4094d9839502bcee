package deps
import (
 _ "go.etcd.io/etcd/server/v3/embed"
 _ "go.etcd.io/etcd/client/v3"
 _ "github.com/go-chi/chi/v5"
 _ "sigs.k8s.io/yaml"
 _ "github.com/evanphx/json-patch/v5"
 _ "github.com/spf13/cobra"
 _ "k8s.io/apimachinery/pkg/labels"
 _ "k8s.io/apimachinery/pkg/fields"
 _ "k8s.io/apimachinery/pkg/util/validation"
 _ "go.uber.org/goleak"
 _ "k8s.io/client-go/dynamic"
 _ "k8s.io/client-go/tools/cache"
 _ "github.com/google/uuid"
)
