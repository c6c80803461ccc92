"""NVFlare 2.9.0 FedOptRecipe(initial_ckpt=...): the server optimizer steps the "model" component's own weights, not
the checkpoint the clients trained from; without fedtheory.

Reddi et al. (2021), Alg. 2: x_{t+1} = x_t + ServerOpt(Delta_t), Delta_t the clients' averaged update from x_t.
FedOptRecipe (nvflare/app_opt/pt/recipes/fedopt.py) registers the user's model as the server component "model",
gives PTFileModelPersistor(model="model", source_ckpt_file_full_name=<initial_ckpt>) and
PTFedOptModelShareableGenerator(source_model="model"). The persistor's load_model (file_model_persistor.py,
load_model) reads the checkpoint into the initial global model and does not load it into the model object; the
generator's START_RUN handler builds the optimizer on that object's parameters (fedopt.py:92-139), and
server_update (fedopt.py:157-182) sets their gradient to -Delta and steps *them*. Round 1's global model is the
model object's own initial weights plus the server step: the checkpoint is lost. The recipe's calls, in
ScatterAndGather's order (scatter_and_gather.py:201, 259, 298, 308), with SGD(lr=1, momentum=0.6) as the recipe's
docstring configures it and no schedule (the recipe's default):
"""
import os
import tempfile

import numpy as np
import torch
from nvflare.apis.dxo import DXO, DataKind
from nvflare.apis.event_type import EventType
from nvflare.apis.fl_constant import ReservedKey
from nvflare.apis.fl_context import FLContext
from nvflare.app_common.app_constant import AppConstants
from nvflare.app_opt.pt.fedopt import PTFedOptModelShareableGenerator
from nvflare.app_opt.pt.file_model_persistor import PTFileModelPersistor
from nvflare.fuel.utils.class_utils import instantiate_class


class Engine:                                                           # the server engine's two services used here
    def __init__(self, components):
        self.components = components

    def get_component(self, cid):
        return self.components.get(cid)

    def build_component(self, config):
        return instantiate_class(config["path"], config["args"])

    def fire_event(self, *a, **k):
        pass


torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
model = torch.nn.Linear(3, 1, bias=False)                              # the user's model, FedOptRecipe(model=...)
w0 = model.weight.detach().numpy().copy()
x = np.array([[0.5, -1.0, 2.0]])                                       # the initial checkpoint, initial_ckpt=...
ckpt = os.path.join(tempfile.mkdtemp(), "initial.pt")
torch.save({"weight": torch.tensor(x)}, ckpt)
delta = np.array([[0.1, 0.2, -0.3]])                                   # the clients' averaged update from x

fl_ctx = FLContext()
fl_ctx.set_prop(ReservedKey.ENGINE, Engine({"model": model}), private=True, sticky=False)
persistor = PTFileModelPersistor(model=model, source_ckpt_file_full_name=ckpt)
generator = PTFedOptModelShareableGenerator(optimizer_args={"path": "torch.optim.SGD",
                                                            "args": {"lr": 1.0, "momentum": 0.6}},
                                            source_model="model", device="cpu")
generator.handle_event(EventType.START_RUN, fl_ctx)
global_model = persistor.load_model(fl_ctx)                            # ScatterAndGather.start_controller
print("global model the clients train from:", np.ravel(global_model["weights"]["weight"]))
fl_ctx.set_prop(AppConstants.GLOBAL_MODEL, global_model, private=True, sticky=True)
aggregated = DXO(data_kind=DataKind.WEIGHT_DIFF, data={"weight": delta}).to_shareable()
new = generator.shareable_to_learnable(aggregated, fl_ctx)              # control_flow, after aggregate()
got = np.asarray(new["weights"]["weight"])
print("NVFlare x_1", got.ravel(), "\nAlg. 2 x_1", (x + delta).ravel(), "\nmodel's own weights + Delta",
      (w0 + delta).ravel())
assert np.allclose(global_model["weights"]["weight"], x)
assert np.allclose(got, w0 + delta) and not np.allclose(got, x + delta, atol=1e-3)
