"""`tf.saved_model` (TensorFlow 1's API): SavedModels in TensorFlow's format, written by
`Builder`/`simple_save` and read by `load`, so models move both ways between graphrt
and TensorFlow (see builder.py and loader.py for the files and what each step does)."""
from . import builder, constants, loader, main_op, signature_constants, signature_def_utils, tag_constants, \
    utils  # noqa: F401
from .builder import Builder  # noqa: F401
from .constants import (ASSETS_DIRECTORY, ASSETS_KEY, DEBUG_DIRECTORY, DEBUG_INFO_FILENAME_PB,  # noqa: F401
                        LEGACY_INIT_OP_KEY, MAIN_OP_KEY, SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT,
                        SAVED_MODEL_SCHEMA_VERSION, VARIABLES_DIRECTORY, VARIABLES_FILENAME)
from .loader import contains_saved_model, load, maybe_saved_model_directory  # noqa: F401
from .main_op import main_op_with_restore  # noqa: F401
from .saved_model_pb2 import SavedModel  # noqa: F401
from .signature_constants import (CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME, CLASSIFY_OUTPUT_CLASSES,  # noqa: F401
                                  CLASSIFY_OUTPUT_SCORES, DEFAULT_SERVING_SIGNATURE_DEF_KEY, PREDICT_INPUTS,
                                  PREDICT_METHOD_NAME, PREDICT_OUTPUTS, REGRESS_INPUTS, REGRESS_METHOD_NAME,
                                  REGRESS_OUTPUTS)
from .signature_def_utils import (build_signature_def, classification_signature_def,  # noqa: F401
                                  is_valid_signature, predict_signature_def, regression_signature_def)
from .simple_save import simple_save  # noqa: F401
from .tag_constants import GPU, SERVING, TPU, TRAINING  # noqa: F401
from .utils import build_tensor_info, get_tensor_from_tensor_info  # noqa: F401
