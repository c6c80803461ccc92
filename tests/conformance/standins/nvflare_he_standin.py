"""A stand-in for NVFlare 2.9.0's HE FedAvg path (``FedAvgRecipeWithHE``) with the shape drivers/nvflare.py's
``fedavg_he`` uses, on top of ``nvflare_recipe_standin``: a ``tenseal`` whose CKKS vector is the plain vector with
TenSEAL's one systematic error (after a plaintext multiplication the rescale by the prime q resets the scale to
2^40, multiplying the value by 2^40 / q; q = 1099510890497, the prime NVFlare's HEBuilder parameters drop),
``HEBuilder``, ``HEModelEncryptor`` (each site's weights times its ``NUM_STEPS_CURRENT_ROUND``, encrypted),
``HEModelDecryptor``, ``HEInTimeAccumulateWeightedAggregator`` (the encrypted sum times 1 / the sum of the steps),
``HEModelShareableGenerator`` and ``FedAvgRecipeWithHE`` (which registers them). ``SLIP`` switches one deviation on.
``install()`` installs the recipe stand-in and then these modules."""
from __future__ import annotations

import sys

import numpy as np

from . import nvflare_recipe_standin as recipe

SLIP: dict = {"encryptor_ignores_steps": False}
RESCALE_FACTOR = 2.0 ** 40 / 1099510890497   # TenSEAL's scale reset after a rescale by this prime


class CKKSVector:
    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64).ravel()

    def __add__(self, other):
        return CKKSVector(self.values + (other.values if isinstance(other, CKKSVector) else other))

    __radd__ = __add__

    def __mul__(self, scalar):
        return CKKSVector(self.values * float(scalar) * RESCALE_FACTOR)

    def serialize(self):
        return self.values.tobytes()

    def decrypt(self, secret_key=None):
        return list(self.values)

    def size(self):
        return self.values.size


class _Context:
    def secret_key(self):
        return None


def _ckks_vector(context, values):
    return CKKSVector(values)


def _ckks_vector_from(context, data):
    return CKKSVector(np.frombuffer(data, dtype=np.float64))


class HEBuilder:
    def initialize(self, project, ctx):
        pass

    def get_serialized_context(self, is_client=False):
        return b"client" if is_client else b"server"


class DXO:
    def __init__(self, data_kind, data, meta=None):
        self.data_kind, self.data, self.meta = data_kind, data, dict(meta or {})

    def to_shareable(self):
        return recipe.Shareable(kind=self.data_kind, data=self.data, meta=self.meta)


def from_shareable(shareable):
    return DXO(shareable["kind"], shareable["data"], shareable["meta"])


class FLContext(recipe.FLContext):
    def set_peer_context(self, ctx):
        self.props["peer"] = ctx


class _Filter:
    tenseal_context = None

    def handle_event(self, event_type, fl_ctx):
        pass


class HEModelEncryptor(_Filter):
    def __init__(self, weigh_by_local_iter=True, **_):
        self.weigh_by_local_iter = weigh_by_local_iter

    def process(self, shareable, fl_ctx):
        dxo = from_shareable(shareable)
        n_iter = 1.0 if SLIP["encryptor_ignores_steps"] else float(dxo.meta[recipe.FLMetaKey.NUM_STEPS_CURRENT_ROUND])
        dxo.data = {k: CKKSVector(np.asarray(v).ravel() * n_iter) for k, v in dxo.data.items()}
        dxo.meta["processed_keys"] = dict.fromkeys(dxo.data, True)
        return dxo.to_shareable()


class HEModelDecryptor(_Filter):
    def process(self, shareable, fl_ctx):
        dxo = from_shareable(shareable)
        if not dxo.meta.get("processed_keys"):   # round 1's plain model: nothing to decrypt
            return shareable
        dxo.data = {k: _ckks_vector_from(None, v).decrypt() for k, v in dxo.data.items()}
        return dxo.to_shareable()


class HEInTimeAccumulateWeightedAggregator(recipe.InTimeAccumulateWeightedAggregator):
    def __init__(self, expected_data_kind=recipe.DataKind.WEIGHT_DIFF, weigh_by_local_iter=False, **kw):
        super().__init__(expected_data_kind=expected_data_kind, **kw)

    def aggregate(self, fl_ctx):
        total = sum(w for _, w in self.results)
        data = {k: sum(d[k] for d, _ in self.results) * (1.0 / total) for k in self.results[0][0]}
        self.results = []
        return recipe.Shareable(kind=self.kind, data=data, meta={"processed_keys": dict.fromkeys(data, True)})


class HEModelShareableGenerator(_Filter):
    def learnable_to_shareable(self, learnable, fl_ctx):
        data = {k: v.serialize() if isinstance(v, CKKSVector) else v for k, v in learnable["weights"].items()}
        return recipe.Shareable(kind=recipe.DataKind.WEIGHTS, data=data, meta=dict(learnable.get("meta", {})))

    def shareable_to_learnable(self, shareable, fl_ctx):
        base = fl_ctx.get_prop(recipe.AppConstants.GLOBAL_MODEL)
        return {"weights": dict(shareable["data"]), "meta": dict(shareable["meta"]), **{
            k: v for k, v in base.items() if k not in ("weights", "meta")}}


class FedAvgRecipeWithHE:
    """``FedAvgRecipeWithHE``'s server components and client filters, where NVFlare's job keeps them."""

    def __init__(self, *, model, min_clients, train_script, **_):
        server = {"persistor": recipe.PTFileModelPersistor(model=model),
                  "shareable_generator": HEModelShareableGenerator(),
                  "aggregator": HEInTimeAccumulateWeightedAggregator(expected_data_kind=recipe.DataKind.WEIGHTS)}
        client = type("ClientAppConfig", (), {
            "task_data_filters": [({"train", "validate"}, [HEModelDecryptor()])],
            "task_result_filters": [({"train"}, [HEModelEncryptor(weigh_by_local_iter=True)]),
                                    ({"submit_model"}, [HEModelEncryptor(weigh_by_local_iter=False)])]})()
        self._job = type("BaseFedJob", (), {"_deploy_map": {"server": recipe.ServerApp(server),
                                                            "@ALL": type("ClientApp", (), {"app_config": client})()}})()


def install() -> None:
    """The recipe stand-in's ``install()``, then ``tenseal`` and the HE modules."""
    recipe.install()
    tenseal = type(sys)("tenseal")
    tenseal.CKKSVector, tenseal.ckks_vector, tenseal.ckks_vector_from = CKKSVector, _ckks_vector, _ckks_vector_from
    tenseal.context_from = lambda data, n_threads=None: _Context()
    sys.modules["tenseal"] = tenseal
    extra = {"nvflare.apis.dxo": {"DXO": DXO, "from_shareable": from_shareable},
             "nvflare.apis.fl_context": {"FLContext": FLContext},
             "nvflare.lighter.impl.he": {"HEBuilder": HEBuilder},
             "nvflare.app_opt.pt.recipes.fedavg_he": {"FedAvgRecipeWithHE": FedAvgRecipeWithHE},
             "nvflare.app_opt.he.intime_accumulate_model_aggregator": {
                 "HEInTimeAccumulateWeightedAggregator": HEInTimeAccumulateWeightedAggregator},
             "nvflare.app_opt.he.model_decryptor": {"HEModelDecryptor": HEModelDecryptor},
             "nvflare.app_opt.he.model_encryptor": {"HEModelEncryptor": HEModelEncryptor},
             "nvflare.app_opt.he.model_shareable_generator": {"HEModelShareableGenerator": HEModelShareableGenerator}}
    recipe.add_modules(extra)
